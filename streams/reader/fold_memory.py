"""Which messages each key's stored status events applied, remembered by the embedded reader, so that
a read-your-writes wait's first look asks the tables nothing (issue 19 item 2).

A wait's first look asked whether its message's fold was already stored: one query over the key's
status events (~5 ms of CPU embedded, ~13 % of the embedded worker's samples while agents wait, for
an answer that is almost always "not yet": the agent has just sent the message). Rules this file
keeps:

* **A key is complete or absent.** The first look on a key loads every message id its stored status
  events applied (one query, coalesced across keys); from then on every status event the sink
  stores is told (:meth:`FoldMemory.told`: streams/reader/fold_watch.py hands over every event the
  embedded sink stores, before or once it is inserted). Events told while the key loads are kept
  with what the query found, so one stored between the query's read and the key's entry is not
  lost.
* **Only in the embedded worker**, whose sink is the one writer of its tables and tells it every
  event (a server reader polls the tables, streams/reader/fold_watch.py ``Polling``).
* **At least what the tables hold.** A deletion removes a key's events from the tables, not from
  here: a fold remembered that the tables no longer have only sends the wait on to the rows, and to
  the query when they do not show the message (the safe side). A fold missing from here would make a
  wait time out; nothing but an incomplete load could cause that, and the load is whole.
* **Bounded**: at most ``max_ids`` ids, the least recently asked key dropped first (asked again, it
  is loaded again).
* The sink's writer thread tells, the reader's loop asks: one lock.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable

ResourceKey = tuple[str, str]  # (resource id, lookup key)
Load = Callable[[ResourceKey], Awaitable[frozenset[str]]]
"""Every message id the key's stored status events applied (streams.reader.queries.applied_ids)."""


class FoldMemory:
    def __init__(self, max_ids: int = 1 << 18) -> None:
        self.max_ids = max_ids
        self._held: OrderedDict[ResourceKey, set[str]] = OrderedDict()
        self._loading: dict[ResourceKey, tuple[list[int], set[str]]] = {}  # loads under way, ids told meanwhile
        self._ids = 0
        self._lock = threading.Lock()
        self.loads = 0  # keys loaded, for tests and profiles

    def told(self, applied: Iterable[tuple[str, str, str]]) -> None:
        """Status events stored, as (resource id, lookup key, applied message id)."""
        with self._lock:
            for resource, key, message_id in applied:
                ids = self._held.get((resource, key))
                if ids is not None and message_id not in ids:
                    ids.add(message_id)
                    self._ids += 1
                loading = self._loading.get((resource, key))
                if loading is not None:
                    loading[1].add(message_id)
            self._bound()

    async def folded(self, key: ResourceKey, message_id: str, load: Load) -> bool:
        """Whether a stored status event of ``key`` applied ``message_id`` (the key loaded first if
        it is not held)."""
        with self._lock:
            ids = self._held.get(key)
            if ids is not None:
                self._held.move_to_end(key)
                return message_id in ids
            count, _ = self._loading.setdefault(key, ([0], set()))
            count[0] += 1
        try:
            found = await load(key)
        finally:
            with self._lock:
                count, told = self._loading[key]
                count[0] -= 1
                if count[0] == 0:
                    del self._loading[key]
        with self._lock:
            self.loads += 1
            ids = self._held.get(key)
            if ids is None:
                ids = self._held[key] = set()
            before = len(ids)
            ids |= found
            ids |= told
            self._ids += len(ids) - before
            self._bound()
            return message_id in ids

    def _bound(self) -> None:
        while self._ids > self.max_ids and len(self._held) > 1:
            _, ids = self._held.popitem(last=False)
            self._ids -= len(ids)
