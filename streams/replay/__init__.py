"""Replay / backfill: existing history (JSONL, Mastra storage, LoCoMo) into the messages topic."""
