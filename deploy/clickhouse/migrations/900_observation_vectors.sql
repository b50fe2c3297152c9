-- Embeddings of observation groups, for recall's semantic search (spec §3.6, §8.4).
-- One row per embedded chunk of a group. id = UUID from sha256 of JSON [resource, thread, group,
-- chunk], so re-indexing the same group replaces its rows (ReplacingMergeTree keeps the highest
-- version) instead of adding duplicates. `embedder` names the model and dimension: vectors of
-- different models are never compared, and switching models re-indexes under the same ids.
-- Sorted by resource first: every search is bound to one resource.
CREATE TABLE IF NOT EXISTS om_observation_vectors
(
    resource_id String,
    thread_id String,
    group_id String,
    chunk_index UInt32,
    id UUID,
    range String COMMENT '"<first message id>:<last message id>" the group was observed from',
    text String COMMENT 'the embedded chunk',
    observed_at Int64 COMMENT 'UTC epoch ms',
    embedder LowCardinality(String),
    embedding Array(Float32),
    version UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (resource_id, thread_id, group_id, chunk_index);
