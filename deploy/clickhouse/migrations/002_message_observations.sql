-- Which messages left the unobserved window, and through which cycle (MessagesObserved deltas).
-- A message of a thread is unobserved while no row here covers it (for the head's key, at a
-- version at or below the head's, so a reader never sees a message leave the window before the
-- observations that cover it). Reached through om_records, which binds a key to its resource.
CREATE TABLE IF NOT EXISTS om_message_observations
(
    lookup_key String,
    message_id String,
    cycle_id String,
    generation UInt32,
    range String COMMENT '"<first id>:<last id>" of the cycle',
    observed_at Int64 COMMENT 'UTC epoch ms',
    version UInt64 COMMENT 'the key''s applied-event counter'
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (lookup_key, message_id);
