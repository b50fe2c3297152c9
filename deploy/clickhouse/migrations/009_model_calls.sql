-- The cost ledger: one row per Observer/Reflector cycle's model calls (results topic), with the
-- tokens the provider billed (summed over the cycle's attempts) and their cost from litellm's
-- offline cost map (NULL for a model the map does not price). A cycle's result is its identity:
-- a redelivered result replaces itself. Sorted by resource first: every question names one.
-- Rows outlive a deleted thread on purpose: they hold no text, and the calls were paid for.
CREATE TABLE IF NOT EXISTS om_model_calls
(
    resource_id String,
    lookup_key String,
    cycle_id String,
    role LowCardinality(String) COMMENT 'observer | reflector',
    model LowCardinality(String) COMMENT 'as configured (Mastra-style provider/model); empty if unknown',
    mode LowCardinality(String),
    ok UInt8,
    attempts UInt16,
    input_tokens UInt64,
    output_tokens UInt64,
    cost_usd Nullable(Float64),
    started_at Int64 COMMENT 'UTC epoch ms',
    completed_at Int64 COMMENT 'UTC epoch ms',
    version UInt64 COMMENT 'the results topic offset'
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (resource_id, lookup_key, cycle_id);
