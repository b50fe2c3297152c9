-- The OM record per lookup key and generation (RecordSnapshot deltas); the head of a key is its
-- highest generation. Each generation keeps its last snapshot, so history stays browsable.
-- This is the table that binds a key to its resource: every reader query starts here.
CREATE TABLE IF NOT EXISTS om_records
(
    resource_id String,
    lookup_key String,
    generation UInt32,
    record_id String,
    scope LowCardinality(String),
    thread_id Nullable(String),
    origin_type LowCardinality(String),
    active_observations String,
    observation_token_count UInt32,
    total_tokens_observed UInt64,
    pending_message_tokens UInt32,
    last_observed_at Nullable(Int64) COMMENT 'the cursor, UTC epoch ms',
    buffered_chunk_ids Array(String),
    buffered_reflection Nullable(String),
    buffered_reflection_tokens UInt32,
    buffered_reflection_input_tokens UInt32,
    observed_timezone String,
    threads String COMMENT 'JSON {thread id: ThreadMeta}: continuation hints, title, extracted values',
    thread_titles Map(String, String),
    unobserved_message_ids Array(String),
    created_at Int64,
    updated_at Int64,
    snapshot_at Int64 COMMENT 'UTC epoch ms of the change',
    version UInt64 COMMENT 'the key''s applied-event counter'
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (resource_id, lookup_key, generation);
