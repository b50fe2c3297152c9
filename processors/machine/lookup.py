"""The lookup key: which record — and so which partition and owner — an event belongs to (§3.1)."""

from __future__ import annotations

from typing import Literal


def lookup_key(scope: Literal["thread", "resource"], thread_id: str, resource_id: str | None) -> str:
    """``thread:<id>`` in thread scope; ``resource:<id>`` in resource scope (thread id as fallback)."""
    if scope == "resource":
        return f"resource:{resource_id or thread_id}"
    return f"thread:{thread_id}"
