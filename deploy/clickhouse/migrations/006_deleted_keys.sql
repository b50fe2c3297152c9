-- Tombstones of deleted threads/resources (KeyDeleted deltas). The sink also removes the key's
-- rows with lightweight DELETEs; the tombstone hides messages that reach the sink after the
-- deletion (the messages topic is consumed independently of the records topic), so a deleted
-- thread never reappears, while a thread re-created later shows only its newer messages.
CREATE TABLE IF NOT EXISTS om_deleted_keys
(
    resource_id String,
    lookup_key String,
    thread_id String COMMENT 'empty when a whole resource key was deleted',
    deleted_at Int64 COMMENT 'UTC epoch ms',
    version UInt64
)
ENGINE = ReplacingMergeTree(deleted_at)
ORDER BY (resource_id, lookup_key);
