"""Deep merge of JSON-like dicts: Mastra's semantics for config overrides (§2.1)."""

from __future__ import annotations

from typing import Any


def deep_merge(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """``patch`` wins; nested dicts merge key by key instead of replacing each other."""
    merged = dict(base)
    for name, value in patch.items():
        if isinstance(value, dict) and isinstance(merged.get(name), dict):
            merged[name] = deep_merge(merged[name], value)
        else:
            merged[name] = value
    return merged
