-- The lifecycle event log (events topic): status, observation-*, buffering-*, activation,
-- thread-update. An event has no id of its own; event_id is a hash of its bytes, so a redelivered
-- or re-emitted event replaces itself. `offset` orders events that share a timestamp (a key's
-- events share one partition). applied_message_id comes from status events: the reader's
-- read-your-writes wait polls it.
CREATE TABLE IF NOT EXISTS om_events
(
    resource_id String,
    lookup_key String,
    thread_id String COMMENT 'empty in resource scope',
    type LowCardinality(String),
    cycle_id String COMMENT 'empty for status events',
    at Int64 COMMENT 'UTC epoch ms (event time)',
    event_id UInt64,
    applied_message_id String COMMENT 'status events: newest message folded; else empty',
    payload String COMMENT 'the event as JSON',
    offset UInt64
)
ENGINE = ReplacingMergeTree(offset)
ORDER BY (resource_id, lookup_key, type, at, event_id);
