"""What the tables hold of each thread's message versions and each key's observation versions,
remembered so that bringing a context row forward (streams/sink/context_appends.py) asks no query.

The shortcut doubts a batch: is a batch message stored in another version, does an observation row
name it or a window message (and at which version), has the key a deletion cut. Asked of the tables,
that was one query per started batch: ~5 ms of CPU embedded, 15 % of the processor's at 1,000
messages/s, and on the path of every agent turn's read-your-writes wait. Rules this file keeps:

* **A unit is complete or absent.** A thread's message versions (``(resource, thread)``), a lookup
  key's observation versions and a key's deletion cut are loaded whole, by one query for all the
  units a batch asks of that are not held, and then kept current from every batch this sink starts
  (:meth:`StoredVersions.learn`, before the batch is inserted). So a held unit has every row stored
  when it was loaded, the rows of the batches being written then (``behind``, counted as stored, as
  the shortcut counts them), and every row of each batch started since.
* **Only this sink writes them.** Every topic the sink reads is keyed by lookup key, and a thread's
  messages all have one lookup key (the scope is one setting of a deployment), so the sink that owns
  a key's partitions is the only one writing these rows (as for streams/sink/row_cache.py, which
  holds this memory and drops it with its own: when partitions are revoked, and when a write fails,
  since what landed is then not known). A load or a batch learned under a memory dropped meanwhile
  is not kept (``epoch``). A deletion drops all of it: deletions are rare, and cut rows by time.
* **At least what the tables hold.** A merge may remove a row's older versions from the tables; the
  memory keeps them. For a new message an older version only makes the shortcut doubt (a recompute:
  the safe side), and the newest version, which is all the rest is asked for, is what a merge keeps.
* **Bounded**: at most ``max_entries`` ids held, the least recently asked unit dropped first.
* The sink's threads (a batch's start, a write's, the consumer's revocations) call it: one lock.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, NamedTuple

from clickhouse_connect.driver.client import Client

from streams.sink.rows import MESSAGE_COLUMNS, OBSERVATION_COLUMNS

Thread = tuple[str, str]  # (resource id, thread id)
ResourceKey = tuple[str, str]  # (resource id, lookup key)

_RESOURCE, _THREAD, _ID, _VERSION = (MESSAGE_COLUMNS.index(c) for c in ("resource_id", "thread_id", "id", "version"))
_OBSERVED_KEY, _OBSERVED_ID, _OBSERVED_VERSION = (OBSERVATION_COLUMNS.index(c)
                                                  for c in ("lookup_key", "message_id", "version"))

_LOAD = """
SELECT 'versions', resource_id, thread_id, id, groupUniqArray(version) FROM om_messages
WHERE (resource_id, thread_id) IN {threads:Array(Tuple(String, String))}
GROUP BY resource_id, thread_id, id
UNION ALL
SELECT 'observed', '', lookup_key, message_id, [max(version)] FROM om_message_observations
WHERE lookup_key IN {lookup_keys:Array(String)}
GROUP BY lookup_key, message_id
UNION ALL
SELECT 'deleted', resource_id, lookup_key, '', [] FROM om_deleted_keys
WHERE (resource_id, lookup_key) IN {keys:Array(Tuple(String, String))}
"""


class Known(NamedTuple):
    """The answers for one batch: per thread each message id's stored versions, per lookup key each
    message id's newest observation version, and the keys with a deletion cut."""

    versions: Mapping[Thread, Mapping[str, tuple[int, ...]]]
    observed: Mapping[str, Mapping[str, int]]
    deleted: Collection[ResourceKey]


_VERSIONS, _OBSERVED, _DELETED = "versions", "observed", "deleted"  # the kinds of unit, as the load tags its rows


class StoredVersions:
    def __init__(self, max_entries: int = 1 << 18) -> None:  # ~40 MB
        self.max_entries = max_entries
        self._held: OrderedDict[tuple[str, Any], dict[str, Any]] = OrderedDict()  # (kind, unit) -> ids
        self._entries = 0
        self._epoch = 0
        self._lock = threading.Lock()
        self.loads = 0  # queries run, for tests and profiles

    @property
    def epoch(self) -> int:
        return self._epoch

    def known(self, client: Client, threads: Collection[Thread], lookup_keys: Collection[str],
              keys: Collection[ResourceKey], behind: Mapping[str, Sequence[Sequence[Any]]], epoch: int) -> Known:
        """The answers for ``threads``, ``lookup_keys`` and ``keys``: held units from memory, the
        others loaded by one query (with ``behind``'s rows: the batches being written), and kept if
        nothing was dropped since ``epoch``."""
        asked = {_VERSIONS: threads, _OBSERVED: lookup_keys, _DELETED: keys}
        found: dict[str, dict[Any, dict[str, Any]]] = {kind: {} for kind in asked}
        missing: dict[str, list[Any]] = {kind: [] for kind in asked}
        with self._lock:
            for kind, units in asked.items():
                for unit in units:
                    ids = self._held.get((kind, unit))
                    if ids is None:
                        missing[kind].append(unit)
                    else:
                        self._held.move_to_end((kind, unit))
                        found[kind][unit] = ids
        if any(missing.values()):
            loaded = self._load(client, missing[_VERSIONS], missing[_OBSERVED], missing[_DELETED])
            _learn_into(loaded[_VERSIONS].get, loaded[_OBSERVED].get, behind)
            with self._lock:
                if epoch == self._epoch:
                    for kind, units in loaded.items():
                        for unit, ids in units.items():
                            if (kind, unit) not in self._held:
                                self._held[kind, unit] = ids
                                self._entries += len(ids) + 1
                    self._bound()
            for kind, units in loaded.items():
                found[kind].update(units)
        return Known(found[_VERSIONS], found[_OBSERVED], {key for key, cut in found[_DELETED].items() if cut})

    def loader(self, client: Client, behind: Mapping[str, Sequence[Sequence[Any]]], epoch: int) -> Loader:
        """:meth:`known` for one batch's start."""
        return lambda threads, lookup_keys, keys: self.known(client, threads, lookup_keys, keys, behind, epoch)

    def learn(self, pending: Mapping[str, Sequence[Sequence[Any]]], epoch: int) -> None:
        """A batch's rows (by table) join the held units they belong to, unless the memory was
        dropped since ``epoch``; a deletion drops it all."""
        with self._lock:
            if epoch != self._epoch:
                return
            if pending.get("om_deleted_keys"):
                self._drop()
                return
            self._entries += _learn_into(lambda unit: self._held.get((_VERSIONS, unit)),
                                         lambda unit: self._held.get((_OBSERVED, unit)), pending)
            self._bound()

    def clear(self) -> None:
        with self._lock:
            self._drop()

    def _drop(self) -> None:
        self._held.clear()
        self._entries = 0
        self._epoch += 1

    def _bound(self) -> None:
        while self._entries > self.max_entries and self._held:
            _, ids = self._held.popitem(last=False)
            self._entries -= len(ids) + 1

    def _load(self, client: Client, threads: Sequence[Thread], lookup_keys: Sequence[str],
              keys: Sequence[ResourceKey]) -> dict[str, dict[Any, dict[str, Any]]]:
        self.loads += 1
        loaded: dict[str, dict[Any, dict[str, Any]]] = {
            _VERSIONS: {thread: {} for thread in threads}, _OBSERVED: {key: {} for key in lookup_keys},
            _DELETED: {key: {} for key in keys}}
        found = client.query(_LOAD, parameters={"threads": sorted(threads), "lookup_keys": sorted(lookup_keys),
                                                "keys": sorted(keys)}).result_rows
        for tag, resource, second, third, found_versions in found:
            if tag == _VERSIONS:
                loaded[_VERSIONS][(resource, second)][third] = tuple(sorted(found_versions))
            elif tag == _OBSERVED:
                loaded[_OBSERVED][second][third] = found_versions[0]
            else:
                loaded[_DELETED][(resource, second)][""] = True  # a deletion unit holds one id: its cut
        return loaded


def _learn_into(versions: Callable[[Thread], dict[str, Any] | None], observed: Callable[[str], dict[str, Any] | None],
                pending: Mapping[str, Sequence[Sequence[Any]]]) -> int:
    """``pending``'s message and observation rows into the units ``versions`` and ``observed`` give
    (None: not held, nothing to keep current); the number of ids added."""
    added = 0
    for row in pending.get("om_messages", ()):
        ids = versions((row[_RESOURCE], row[_THREAD]))
        if ids is not None:
            had = ids.get(row[_ID], ())
            if row[_VERSION] not in had:
                ids[row[_ID]] = (*had, row[_VERSION])
                added += not had
    for row in pending.get("om_message_observations", ()):
        ids = observed(row[_OBSERVED_KEY])
        if ids is not None:
            had = ids.get(row[_OBSERVED_ID])
            if had is None or row[_OBSERVED_VERSION] > had:
                ids[row[_OBSERVED_ID]] = row[_OBSERVED_VERSION]
                added += had is None
    return added


Loader = Callable[[Collection[Thread], Collection[str], Collection[ResourceKey]], Known]
"""What the shortcut is handed: the answers for a batch's threads, lookup keys and keys."""
