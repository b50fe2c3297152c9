-- The Observer-managed working memory per lookup key, one row per version (every version kept, so
-- its history is browsable); the reader serves the newest as its own block after the observations.
CREATE TABLE IF NOT EXISTS om_working_memory
(
    resource_id String,
    lookup_key String,
    wm_version UInt32,
    content String,
    updated_at Int64 COMMENT 'UTC epoch ms of the change',
    version UInt64 COMMENT 'the key''s applied-event counter'
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (resource_id, lookup_key, wm_version);
