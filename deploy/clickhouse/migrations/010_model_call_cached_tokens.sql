-- The cost ledger keeps the cached input tokens of each cycle's model calls apart: the part of
-- input_tokens the provider read from its prompt cache, billed at its cache-read price. Rows
-- written before this migration read 0 (their results did not carry the count).
ALTER TABLE om_model_calls ADD COLUMN IF NOT EXISTS cached_input_tokens UInt64 DEFAULT 0
    COMMENT 'part of input_tokens read from the provider''s prompt cache' AFTER input_tokens;
