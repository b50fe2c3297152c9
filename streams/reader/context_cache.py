"""The reader's in-process cache of context rows, kept by version (issue 19 item 1).

Allowed only where every write to the rows is seen: the embedded worker, whose own sink is the one
process that can write its chDB directory. That sink hands :meth:`ContextCache.written` each batch of
rows it inserted, after the insert, and :meth:`ContextCache.landing` its shortcuts' rows before it
inserts them (so a read-your-writes wait returns without waiting for the batch's inserts): the
newest version per key is recorded, and an entry held for the key takes the new rows (so an agent's
next read after a batch still needs no query). A row announced for a key not held waits beside the
entries until its insert: a read that fetches the table meanwhile is served it in place of the
older stored one, so no read after a wait's answer is older than that answer. A write that fails
after announcing rows withdraws their keys (:meth:`ContextCache.forget`): their entries and
announced rows are dropped, and the tables are read again. An entry is
served only while its version is at least the newest written for its key, and a fetched entry older
than that is not kept, so the cache never answers with a row older than one already written — and
``status()`` and ``context()`` read the same entry, so a context is never older than the status.
With a ClickHouse server (other sinks write) there is no cache: every read is one query.

A key with no row at all (a thread's first turn) is answered without a query once the cache knows
the table's keys (:meth:`ContextCache.know_stored`: each key's :func:`key_hash`, read after the cache
began taking the sink's writes, 8 bytes a key): a key neither among them nor written since has no
row. Such a read gets an empty entry, which the key's first rows then fill as any entry's. Until
the keys are known, and for any key that matches one of them, the read queries as before.

Entries are per lookup key and hold every resource's row of it (or none): a hit costs the same
whether the thread is the caller's, another resource's or missing, so timing tells nothing. At most
``capacity`` keys are kept, least recently used dropped first. The sink calls from its writer thread,
the reader from the event loop: one lock guards both.
"""

from __future__ import annotations

import bisect
import hashlib
import threading
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from streams.reader.context_row import ContextRow, decode_context_row

KeyRows = Mapping[str, ContextRow]
"""A lookup key's context rows by resource id."""


class ContextCache:
    def __init__(self, capacity: int = 10_000) -> None:
        self._capacity = capacity
        self._newest: dict[str, int] = {}  # per key ever written: one int each
        self._entries: OrderedDict[str, tuple[int, dict[str, ContextRow]]] = OrderedDict()
        self._landing: dict[str, dict[str, Sequence[Any]]] = {}  # rows announced, not inserted yet, of keys not held
        self._stored: array | None = None  # sorted key_hash of the keys the table held, once known
        self._lock = threading.Lock()

    def know_stored(self, hashes: Iterable[int]) -> None:
        """The :func:`key_hash` of every key the table holds, read after this cache began taking the
        sink's writes (so a key written since is in ``_newest`` if the read missed it)."""
        stored = array("Q", sorted(hashes))
        with self._lock:
            self._stored = stored

    def get(self, key: str) -> KeyRows | None:
        """The key's rows, unless a newer row has been written than the entry holds; no rows for a
        key the table never held and no write has named since."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None and self._never_stored(key):
                entry = self._entries[key] = (0, {})
                self._trim()
            if entry is None or entry[0] < self._newest.get(key, 0):
                return None
            self._entries.move_to_end(key)
            return entry[1]

    def put(self, key: str, rows: KeyRows) -> KeyRows:
        """What a query fetched, with the rows announced and not inserted yet in place of older ones
        (what to serve); kept unless a newer row was written meanwhile."""
        with self._lock:
            landing = self._landing.get(key)
            if landing:
                rows = dict(rows)
                for resource, raw in landing.items():
                    if resource not in rows or rows[resource].version < int(raw[-1]):
                        rows[resource] = decode_context_row(raw)
            version = max((row.version for row in rows.values()), default=0)
            if version < self._newest.get(key, 0):
                return rows
            held = self._entries.get(key)
            if held is None or held[0] <= version:
                self._entries[key] = (version, dict(rows))
                self._entries.move_to_end(key)
                self._landing.pop(key, None)  # the entry holds them now
            self._trim()
            return rows

    def never_stored(self, key: str) -> bool:
        """Whether ``key`` has no row: the table did not hold it and no write has named it since
        (False while the table's keys are not known)."""
        with self._lock:
            return self._never_stored(key)

    def _never_stored(self, key: str) -> bool:
        stored = self._stored
        if stored is None or key in self._newest or key in self._landing:
            return False
        hashed = key_hash(key)
        at = bisect.bisect_left(stored, hashed)
        return at == len(stored) or stored[at] != hashed

    def _trim(self) -> None:
        while len(self._entries) > self._capacity:
            self._entries.popitem(last=False)

    def forget(self, keys: Sequence[str]) -> None:
        """Drop the entries and announced rows of ``keys`` (a write that failed after announcing).
        Their newest version stays: a row fetched older than it is served, not kept, until the next write."""
        with self._lock:
            for key in keys:
                self._entries.pop(key, None)
                self._landing.pop(key, None)

    def landing(self, rows: Sequence[Sequence[Any]]) -> None:
        """The sink announces these rows before it inserts them: held entries take them, and a key
        not held keeps them until they are inserted, so a read that fetches the table meanwhile is
        served them (a read after a read-your-writes wait is never older than the wait's answer)."""
        self._take(rows, landing=True)

    def written(self, rows: Sequence[Sequence[Any]]) -> None:
        """The sink inserted these rows (``om_contexts`` columns): held entries take them."""
        self._take(rows, landing=False)

    def _take(self, rows: Sequence[Sequence[Any]], landing: bool) -> None:
        with self._lock:
            for raw in rows:
                key, resource, version = raw[0], raw[1], int(raw[-1])
                entry = self._entries.get(key)
                if entry is not None and entry[0] >= self._newest.get(key, 0):  # held and current: update it
                    held = entry[1].get(resource)
                    if held is None or held.version < version:
                        row = decode_context_row(raw)
                        if held is not None:
                            row.inherit(held)  # its decoded window messages, for the next read
                        self._entries[key] = (max(entry[0], version), {**entry[1], resource: row})
                elif entry is not None:
                    del self._entries[key]
                waiting = self._landing.get(key)
                if landing and key not in self._entries:
                    self._landing.setdefault(key, {})[resource] = raw
                elif waiting is not None and resource in waiting and int(waiting[resource][-1]) <= version:
                    del waiting[resource]  # inserted: the table has it
                    if not waiting:
                        del self._landing[key]
                self._newest[key] = max(version, self._newest.get(key, 0))


def key_hash(key: str) -> int:
    """The first 8 bytes of the key's MD5, little-endian: what ``queries.context_key_hashes`` reads
    from the table for each key."""
    return int.from_bytes(hashlib.md5(key.encode()).digest()[:8], "little")
