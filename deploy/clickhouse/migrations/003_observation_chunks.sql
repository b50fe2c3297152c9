-- Buffered observation chunks and their fate (ChunkChanged deltas): buffered, activated, dropped.
-- One row per chunk id; the newest status wins by version. Reached through om_records.
CREATE TABLE IF NOT EXISTS om_observation_chunks
(
    lookup_key String,
    chunk_id String,
    cycle_id String,
    generation UInt32,
    status LowCardinality(String),
    observations String,
    token_count UInt32,
    message_ids Array(String),
    message_tokens UInt32,
    range String COMMENT '"<first id>:<last id>" of message_ids',
    last_observed_at Int64 COMMENT 'UTC epoch ms',
    created_at Int64 COMMENT 'UTC epoch ms',
    thread_title Nullable(String),
    extracted_values Nullable(String) COMMENT 'JSON object',
    changed_at Int64 COMMENT 'UTC epoch ms of the status change',
    version UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (lookup_key, chunk_id);
