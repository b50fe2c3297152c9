-- The cost ledger keeps the input tokens a call wrote to the provider's prompt cache apart (Anthropic's
-- cache_creation_input_tokens, billed at 1.25x input; cost_usd prices them so). Part of input_tokens,
-- like the cached ones. Rows written before this migration, and results of older workers, read 0.
ALTER TABLE om_model_calls ADD COLUMN IF NOT EXISTS cache_write_input_tokens UInt64 DEFAULT 0
    COMMENT 'part of input_tokens written to the provider''s prompt cache' AFTER cached_input_tokens;
