"""Where part estimates are remembered, and where clients may supply their own.

Mastra writes its estimates back into the message (``providerMetadata.mastra.tokenEstimate``). Here
messages are shared, immutable event payloads, so the counter keeps its own bounded LRU instead,
keyed like Mastra's cache entries: ``(kind, sha256(payload))``. Hashing bounds memory whatever the
payload size, and including the kind keeps e.g. a tool name and an identical text apart.

A client may stamp an authoritative estimate on an attachment (when the real bytes were uploaded
elsewhere, its size is unknowable here): ``{"source": "client", "tokens": N}`` as the slot itself
or as any entry of a keyed map. Those are used verbatim and never recomputed.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

CLIENT_SOURCE = "client"
DEFAULT_CACHE_SIZE = 8192


class EstimateCache:
    """A thread-safe LRU from ``(kind, sha256(payload))`` to a token count."""

    def __init__(self, max_entries: int = DEFAULT_CACHE_SIZE) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be >= 1, got {max_entries}")
        self._max_entries = max_entries
        self._entries: OrderedDict[tuple[str, bytes], float] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get_or_compute(self, kind: str, payload: str | bytes, compute: Callable[[], float]) -> float:
        """The remembered estimate for this payload, else ``compute()`` (run outside the lock)."""
        data = payload.encode("utf-8", "surrogatepass") if isinstance(payload, str) else payload
        key = (kind, hashlib.sha256(data).digest())
        with self._lock:
            tokens = self._entries.get(key)
            if tokens is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return tokens
            self.misses += 1
        tokens = compute()
        with self._lock:
            self._entries[key] = tokens
            self._entries.move_to_end(key)
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)
        return tokens


def part_client_estimate(part: Mapping[str, Any]) -> float | None:
    """The client estimate of a Mastra-shaped part (``providerMetadata.mastra.tokenEstimate``)."""
    metadata = part.get("providerMetadata")
    mastra = metadata.get("mastra") if isinstance(metadata, Mapping) else None
    return client_estimate(mastra.get("tokenEstimate") if isinstance(mastra, Mapping) else None)


def client_estimate(slot: Any) -> float | None:
    """The client-supplied token count in a ``tokenEstimate`` slot, if there is a valid one."""
    if not isinstance(slot, Mapping):
        return None
    if _is_client_entry(slot):
        return slot["tokens"]
    for entry in slot.values():
        if _is_client_entry(entry):
            return entry["tokens"]
    return None


def _is_client_entry(entry: Any) -> bool:
    """``source == "client"`` with a finite ``tokens >= 0``.

    Mastra also insists on a numeric ``v`` and a string ``key``; we do not, so that clients of this
    project can send just ``{"source": "client", "tokens": N}``. Mastra's full form passes too.
    """
    if not isinstance(entry, Mapping) or entry.get("source") != CLIENT_SOURCE:
        return False
    tokens = entry.get("tokens")
    is_number = isinstance(tokens, (int, float)) and not isinstance(tokens, bool)
    return is_number and math.isfinite(tokens) and tokens >= 0
