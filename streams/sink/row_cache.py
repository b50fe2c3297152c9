"""The sink's memory of the context rows it wrote last, so a shortcut needs no query for them.

The two shortcuts of :mod:`streams.sink.contexts` (a key only events touched gets the newest status;
a key only new messages and snapshots touched is brought forward by them) start from the key's
stored row, one primary-key query per batch (~2–3 ms of CPU embedded, a round trip on a server) on
every flush of a live conversation. The row this process inserted last for a key is that stored
row, as long as no other process wrote one since; and only then is it known to include every row of
the key but the batch's, which a snapshot's shortcut needs. Rules this file keeps:

* **Only rows this sink writes.** A shortcut's row is recorded as it is computed and announced (the
  next batch's start may bring it forward while this batch is still being inserted:
  :mod:`streams.sink.writer`), a recomputed row after ClickHouse accepted it; a write that fails drops
  everything, so a row ClickHouse refused is not remembered past the failure, and a write whose
  memory was dropped announces nothing more (:meth:`Pinned.while_current`).
* **One writer per key.** Every topic the sink reads is keyed by lookup key, so the sink that owns a
  key's partition is the only one writing its row. When partitions are revoked (a rebalance, another
  sink may take them) the whole memory is dropped; so it is when a write fails (what landed is not
  known) and for a deleted key. A row not remembered is read from the table, as before. A write
  that was under way when everything was dropped records nothing (:meth:`RowCache.pinned`): its
  rows may be of keys that are no longer this sink's.
* **Newest wins.** A key's row is replaced only by one of the same or a newer version: a batch's
  rows are recorded again once inserted, which may be after the next batch brought them forward.
* **Bounded**: at most ``max_bytes`` of rows (their windows, the large part), least recently written
  dropped first.
* It also holds, and drops with its rows, what the tables hold of the keys' message and observation
  versions (streams/sink/stored_versions.py), which rests on the same rule of one writer per key.
* The writer's thread and the consumer's loop (revocations) both call it: one lock.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from clickhouse_connect.driver.client import Client

from streams.sink.stored_versions import Loader, StoredVersions

ResourceKey = tuple[str, str]  # (resource id, lookup key), as streams.reader.queries names them
_KEY, _RESOURCE, _VERSION = 0, 1, -1  # indices in an om_contexts row (streams.sink.contexts.CONTEXT_COLUMNS)


def _size(row: Sequence[Any]) -> int:
    return 256 + sum(len(value) for value in row if isinstance(value, str))


class RowCache:
    def __init__(self, max_bytes: int = 64 << 20) -> None:
        self.max_bytes = max_bytes
        self._rows: OrderedDict[ResourceKey, list[Any]] = OrderedDict()
        self._bytes = 0
        self._epoch = 0  # one more each time everything is dropped
        self._lock = threading.Lock()
        self.versions = StoredVersions()  # the doubts' answers (streams/sink/stored_versions.py), dropped with the rows

    def pinned(self) -> Pinned:
        """This memory for one write: what it inserts is recorded only if nothing was dropped meanwhile."""
        return Pinned(self, self._epoch, self.versions.epoch)

    def get(self, keys: Sequence[ResourceKey]) -> list[list[Any] | None]:
        """Each key's last inserted row (a copy: callers change theirs), or None."""
        with self._lock:
            return [list(row) if (row := self._rows.get(key)) is not None else None for key in keys]

    def inserted(self, rows: Iterable[Sequence[Any]], epoch: int | None = None) -> None:
        with self._lock:
            if epoch is not None and epoch != self._epoch:
                return
            for row in rows:
                key = (row[_RESOURCE], row[_KEY])
                old = self._rows.get(key)
                if old is not None and old[_VERSION] > row[_VERSION]:
                    continue  # a batch's row, inserted after the next batch's start brought it forward
                if old is not None:
                    del self._rows[key]
                    self._bytes -= _size(old)
                self._rows[key] = list(row)
                self._bytes += _size(row)
            while self._bytes > self.max_bytes and self._rows:
                _, dropped = self._rows.popitem(last=False)
                self._bytes -= _size(dropped)

    def forget(self, keys: Iterable[ResourceKey] | None = None) -> None:
        """Drop ``keys`` (None: everything; either way the stored versions: a key is forgotten when
        it is deleted)."""
        self.versions.clear()
        with self._lock:
            if keys is None:
                self._rows.clear()
                self._bytes = 0
                self._epoch += 1
                return
            for key in keys:
                old = self._rows.pop(key, None)
                if old is not None:
                    self._bytes -= _size(old)


class Pinned:
    """A :class:`RowCache` as one write sees it (:meth:`RowCache.pinned`)."""

    def __init__(self, cache: RowCache, epoch: int, versions_epoch: int) -> None:
        self._cache, self._epoch, self._versions_epoch = cache, epoch, versions_epoch

    @property
    def current(self) -> bool:
        """Nothing was dropped since this write began: what it remembered is still there."""
        return self._epoch == self._cache._epoch

    def while_current(self, action: Callable[[], None]) -> bool:
        """Run ``action`` (an announce) only if nothing was dropped since this write began, and with
        no drop while it runs; whether it ran."""
        with self._cache._lock:
            if self._epoch != self._cache._epoch:
                return False
            action()
            return True

    def get(self, keys: Sequence[ResourceKey]) -> list[list[Any] | None]:
        return self._cache.get(keys)

    def inserted(self, rows: Iterable[Sequence[Any]]) -> None:
        self._cache.inserted(rows, self._epoch)

    def forget(self, keys: Iterable[ResourceKey] | None = None) -> None:
        self._cache.forget(keys)

    def versions(self, client: Client, behind: Mapping[str, Sequence[Sequence[Any]]]) -> Loader:
        """The stored versions' answers for this write's start, ``behind`` the batches being written."""
        return self._cache.versions.loader(client, behind, self._versions_epoch)

    def learn(self, pending: Mapping[str, Sequence[Sequence[Any]]]) -> None:
        """A batch's rows, as its start hands them to be inserted, join the stored versions."""
        self._cache.versions.learn(pending, self._versions_epoch)
