"""The reader's in-process cache of context rows, invalidated by version (issue 19 item 1).

Allowed only where every write to the rows is seen: the embedded worker, whose own sink is the one
process that can write its chDB directory. That sink tells :class:`KeyVersions` the version of each
row it inserts, after the insert; an entry is served only while its version is at least the newest
announced for its key, so the cache never answers with a row older than one already written — and
``status()`` and ``context()`` read the same entry, so a context is never older than the status.
With a ClickHouse server (other sinks write) there is no cache: every read is one query.

Entries are per lookup key and hold every resource's row of it (or none): a hit costs the same
whether the thread is the caller's, another resource's or missing, so timing tells nothing.
A fetched entry replaces the cached one only if it is not older (concurrent fetches may finish out
of order). At most ``capacity`` keys are kept, least recently used dropped first.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping

from streams.reader.queries import ContextRow

KeyRows = Mapping[str, ContextRow]
"""A lookup key's context rows by resource id."""


class KeyVersions:
    """The newest context-row version per lookup key written by this process's sink."""

    def __init__(self) -> None:
        self._newest: dict[str, int] = {}

    def announce(self, versions: Mapping[str, int]) -> None:
        """Called by the sink (from its writer thread) after the rows are inserted."""
        for key, version in versions.items():
            if version > self._newest.get(key, 0):
                self._newest[key] = version

    def newest(self, key: str) -> int:
        return self._newest.get(key, 0)


class ContextCache:
    def __init__(self, versions: KeyVersions, capacity: int = 10_000) -> None:
        self._versions = versions
        self._capacity = capacity
        self._entries: OrderedDict[str, tuple[int, KeyRows]] = OrderedDict()

    def get(self, key: str) -> KeyRows | None:
        """The key's rows, unless a newer row has been written since they were fetched."""
        entry = self._entries.get(key)
        if entry is None or entry[0] < self._versions.newest(key):
            return None
        self._entries.move_to_end(key)
        return entry[1]

    def put(self, key: str, rows: KeyRows) -> None:
        version = max((row.version for row in rows.values()), default=0)
        held = self._entries.get(key)
        if held is not None and held[0] > version:
            return
        self._entries[key] = (version, rows)
        self._entries.move_to_end(key)
        while len(self._entries) > self._capacity:
            self._entries.popitem(last=False)
