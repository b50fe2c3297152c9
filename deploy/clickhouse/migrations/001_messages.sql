-- Chat messages, one row per message id (from the messages topic).
-- Producing an id again is an update: ReplacingMergeTree keeps the row with the highest
-- `version` (the record's offset on the messages topic; a thread's messages share one partition,
-- so later = larger). The sort key is (resource, thread, id) and not created_at: an update may
-- change created_at, and only an id-based key lets the update replace the old row. Per-thread
-- reads still touch only that thread's granules; newest-first order is a sort over them.
-- No time partitioning: deduplication works within a partition only.
CREATE TABLE IF NOT EXISTS om_messages
(
    resource_id String COMMENT 'owner: the message resource id, or the thread id when absent',
    thread_id String,
    id String,
    lookup_key String,
    role LowCardinality(String),
    created_at Int64 COMMENT 'UTC epoch ms (event time)',
    parts String COMMENT 'JSON array of parts (Mastra message format v2, snake_case)',
    model Nullable(String),
    metadata Nullable(String) COMMENT 'JSON object',
    message_resource_id Nullable(String) COMMENT 'resource_id exactly as produced (may be null)',
    version UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (resource_id, thread_id, id);
