-- One row per (lookup key, resource): everything the reader needs to answer context() and status()
-- in one primary-key query (issue 19 item 1). The sink recomputes a key's row from the tables above
-- after every batch that touches the key (streams/sink/contexts.py), so those tables stay the source
-- of truth and this one is a projection of them. The sort key starts with the lookup key so one
-- query returns every resource's row for a key: the reader needs them to tell "another resource
-- owns this thread" from "no such thread" after the same work.
CREATE TABLE IF NOT EXISTS om_contexts
(
    lookup_key String,
    resource_id String,
    head Nullable(String) COMMENT 'JSON of the head generation (observations, version, timezone, threads, cursor); null before the first snapshot',
    working_memory Nullable(String),
    status Nullable(String) COMMENT 'the newest status event (JSON), null before the first step',
    status_at Int64 COMMENT 'its event time and events-topic offset: which status is newer',
    status_offset UInt64,
    windows String COMMENT 'JSON {thread id: [message]}: each thread''s unobserved messages, oldest first',
    message_threads Array(String) COMMENT 'threads the resource has any message in under this key',
    speaking_threads Array(String) COMMENT 'resource scope: the resource''s threads with non-system messages, sorted',
    version UInt64 COMMENT 'grows with every recompute of the row (the sink''s clock, ns)'
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (lookup_key, resource_id)
-- rows are kilobytes: a lookup decompresses one small granule, not 8,192 rows
SETTINGS index_granularity = 32;
