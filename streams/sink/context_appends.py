"""Context rows of keys a batch only added messages and snapshots to: the stored row, brought forward.

Most batches of a live conversation add a message or two to a key, and half of them the snapshot
its fold or an Observer's result wrote (a buffered chunk, a new head version). Recomputing such a
key's row from the tables runs three to five queries (:func:`streams.sink.contexts.context_rows`);
this takes the stored row, appends the batch's messages to its window and moves its head to the
batch's newest snapshot. It asks the tables nothing when the sink remembers the key's row
(streams/sink/row_cache.py) and what the tables hold of its threads' messages and observations
(streams/sink/stored_versions.py); what it does not remember it reads in one query each. A window
this sink wrote is not parsed again (streams/sink/window_parses.py), nor written out again where the
batch only added messages after it (streams/sink/window_texts.py). Rules this file keeps:

* **The same row a recompute would write, or none.** A key is brought forward only when the tables
  show that a recompute could not differ: each of its batch messages is new (no other version of it
  is stored than the batch's own), not refused, not observed (no observation row names it), the
  key has no deletion cut, and no message already in the window shares a new one's time (order
  between them would need the stored versions). A key with no stored row starts from an empty one:
  every touched key's row is written in the flush that touches it, so no row means no flush of
  the key has landed (after a crash between a flush's inserts, the redelivered records bring the
  row to the tables' state). Any doubt sends the key to
  the full recompute, which stays the definition (the fuzz equality tests in
  ``tests/integration/test_context_rows.py`` drive both paths).
* A message joins its thread's window (non-system) and the key's thread lists exactly as the
  recompute's queries count it: ``message_threads`` any message, ``speaking_threads`` a non-system one.
* **A snapshot moves the head as the head query would** (``om_records FINAL``, highest generation):
  to the newest of the stored head and the batch's snapshots by (generation, version). Then the
  window loses the messages whose observation rows' newest version is at or below the new head's
  (what the window query's ``FINAL`` keeps), and the working memory is the batch's block with the
  highest ``wm_version`` among those newer than the old head (a block comes with its snapshot, so
  none is newer than the new head; blocks only grow with the key's version; none: the stored block
  stays). An observed copy of a message (the processor's) that the new head shows observed only
  adds to the thread lists; one it does not is in the window like a new message. This holds only
  if no other rows of the key landed since the stored row was computed, which the rows this sink
  remembers it wrote guarantee, and so does a key without a row: a snapshot's key with a row in
  the table that this sink does not remember is recomputed
  (:func:`streams.sink.contexts.brought_forward` decides).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import orjson

from streams.reader.context_row import head_fields
from streams.reader.queries import ResourceKey
from streams.sink.head_versions import HeadVersions
from streams.sink.rows import (MESSAGE_COLUMNS, OBSERVATION_COLUMNS, OBSERVED_VERSION, RECORD_COLUMNS,
                               WORKING_MEMORY_COLUMNS)
from streams.sink.stored_versions import Loader
from streams.sink.window_parses import PARSES
from streams.sink.window_texts import Windows

HEADS = HeadVersions()  # where the heads it read or made stand (streams/sink/head_versions.py)

_RESOURCE, _THREAD, _ID, _KEY, _ROLE, _CREATED, _PARTS, _MODEL, _METADATA, _MESSAGE_RESOURCE, _VERSION, _REFUSED = (
    MESSAGE_COLUMNS.index(c) for c in MESSAGE_COLUMNS)
_HEAD_COLUMNS = tuple(RECORD_COLUMNS.index(c) for c in ("generation", "version", "active_observations",
                                                        "observed_timezone", "threads", "last_observed_at"))
_OBSERVED_KEY, _OBSERVED_ID, _OBSERVED_VERSION = (OBSERVATION_COLUMNS.index(c)
                                                  for c in ("lookup_key", "message_id", "version"))
_WM_VERSION, _WM_CONTENT, _WM_KEY_VERSION = (WORKING_MEMORY_COLUMNS.index(c)
                                             for c in ("wm_version", "content", "version"))
# row indices of a stored om_contexts row (streams.sink.contexts.CONTEXT_COLUMNS)
_HEAD, _WORKING_MEMORY, _WINDOWS, _MESSAGE_THREADS, _SPEAKING = 2, 3, 7, 8, 9

StoredRows = Callable[[Sequence[ResourceKey]], list[list[Any] | None]]


class _Head:
    """A key's head as the batch moves it: where it was, where it goes, and its new column."""

    def __init__(self, stored: str | None) -> None:
        self.before = HEADS.of(stored)
        self.after, self.column = self.before, stored

    def offer(self, record: Sequence[Any]) -> None:
        fields = head_fields(*(record[i] for i in _HEAD_COLUMNS))
        if (fields["generation"], fields["version"]) > self.after:
            self.after, self.column = (fields["generation"], fields["version"]), orjson.dumps(fields).decode()

    @property
    def moved(self) -> bool:
        return self.after != self.before


def appended_rows(keys: Sequence[ResourceKey], pending: Mapping[str, Sequence[Sequence[Any]]],
                  stored_rows: StoredRows, versions: Loader) -> tuple[list[list[Any]], list[ResourceKey]]:
    """The rows of ``keys`` brought forward by the batch's rows (``pending``, by table), without a
    new version or status yet; and the keys that need a full recompute instead. ``stored_rows``
    gives the keys' stored rows (streams.sink.contexts: remembered, else one query); ``versions``
    what the tables hold of the batch's threads and keys (streams/sink/stored_versions.py: the
    batches still being inserted counted as stored)."""
    if not keys:
        return [], []
    wanted = set(keys)
    newest: dict[tuple[str, str, str], Sequence[Any]] = {}
    batch_versions: dict[tuple[str, str, str], set[int]] = {}
    for row in pending.get("om_messages", ()):
        if (row[_RESOURCE], row[_KEY]) in wanted:
            ident = (row[_RESOURCE], row[_THREAD], row[_ID])
            batch_versions.setdefault(ident, set()).add(row[_VERSION])
            if ident not in newest or row[_VERSION] > newest[ident][_VERSION]:
                newest[ident] = row
    stored = {key: row if row is not None else _empty_row(key) for key, row in zip(keys, stored_rows(keys), strict=True)}
    heads = {key: _Head(row[_HEAD]) for key, row in stored.items()}
    for row in pending.get("om_records", ()):
        if (head := heads.get((row[0], row[1]))) is not None:
            head.offer(row)
    for head in heads.values():
        if head.moved:
            HEADS.made(head.column, head.after)  # the next batch starts from this column
    windows: dict[ResourceKey, Windows] = {}  # parsed once, only where changed

    def parsed(key: ResourceKey) -> Windows:
        if key not in windows:
            windows[key] = PARSES.parsed(stored[key][_WINDOWS])
        return windows[key]

    shown = {(key[1], message["id"]) for key, head in heads.items() if head.moved
             for window in parsed(key).lists.values() for message in window}
    shown |= {(row[_KEY], row[_ID]) for row in newest.values() if row[_VERSION] >= OBSERVED_VERSION}
    doubtful, observed = _doubts(versions, keys, newest, batch_versions, shown,
                                 pending.get("om_message_observations", ()))
    by_key: dict[ResourceKey, tuple[list[Sequence[Any]], list[Sequence[Any]]]] = {}
    for row in newest.values():
        key = (row[_RESOURCE], row[_KEY])
        if key in heads:
            version = heads[key].after[1]
            hidden = row[_VERSION] >= OBSERVED_VERSION and observed.get((row[_KEY], row[_ID]), version + 1) <= version
            by_key.setdefault(key, ([], []))[hidden].append(row)
    rows, full = [], list(doubtful)
    for key in keys:
        if key in doubtful:
            continue
        messages, hidden = by_key.get(key, ([], []))
        head = heads[key]
        brought = list(stored[key])
        if (messages or hidden) and not _append(brought, parsed(key), messages, hidden):
            full.append(key)
            continue
        if head.moved:
            _move_head(brought, parsed(key), key, head, observed, pending.get("om_working_memory", ()))
        if key in windows:
            brought[_WINDOWS] = windows[key].column()  # what the batch did not change is not written out again
            PARSES.record(brought[_WINDOWS], windows[key], replaces=stored[key][_WINDOWS])
        rows.append(brought)
    return rows, sorted(full)


def _empty_row(key: ResourceKey) -> list[Any]:
    """The row of a key that has none stored: no flush of it has landed, so the batch is all it has."""
    return [key[1], key[0], None, None, None, 0, 0, "{}", [], [], 0]


def _doubts(versions: Loader, keys: Sequence[ResourceKey], newest: dict[tuple[str, str, str], Sequence[Any]],
            batch_versions: dict[tuple[str, str, str], set[int]], shown: set[tuple[str, str]],
            observations: Sequence[Sequence[Any]]) -> tuple[set[ResourceKey], dict[tuple[str, str], int]]:
    """The keys whose messages are not plainly new, or that have a deletion cut; and the newest
    observation version of each ``shown`` (lookup key, message id), the batch's own rows
    (``observations``) counted whether or not they are inserted yet. A message is plainly new when
    no other version of it is stored and no observation row names it; an observed copy (the
    processor's, at ``OBSERVED_VERSION`` and up), when no stored version outranks it."""
    doubtful = {(row[_RESOURCE], row[_KEY]) for row in newest.values() if row[_REFUSED]}
    new = {(row[_KEY], row[_ID]) for row in newest.values() if row[_VERSION] < OBSERVED_VERSION}
    asked = new | shown
    known = versions({(resource, thread) for resource, thread, _ in newest}, {key for key, _ in asked}, keys)
    doubtful.update(known.deleted)
    named: dict[tuple[str, str], int] = {}  # the newest observation version naming (lookup key, message id)
    for pair in asked:
        found = known.observed[pair[0]].get(pair[1])
        if found is not None:
            named[pair] = found
    for row in observations:
        pair = (row[_OBSERVED_KEY], row[_OBSERVED_ID])
        if pair in asked and row[_OBSERVED_VERSION] > named.get(pair, -1):
            named[pair] = row[_OBSERVED_VERSION]
    for ident, row in newest.items():
        stored = known.versions[ident[:2]].get(ident[2])
        if not stored:
            continue
        if row[_VERSION] >= OBSERVED_VERSION:
            outranked = max(stored) > row[_VERSION]
        else:
            outranked = not set(stored) <= batch_versions[ident]
        if outranked:
            doubtful.add((row[_RESOURCE], row[_KEY]))
    observed: dict[tuple[str, str], int] = {}
    for pair, version in named.items():
        if pair in new:
            doubtful.update((row[_RESOURCE], row[_KEY]) for row in newest.values() if (row[_KEY], row[_ID]) == pair)
        if pair in shown:
            observed[pair] = version
    return doubtful, observed


def _append(row: list[Any], windows: Windows, messages: list[Sequence[Any]], hidden: list[Sequence[Any]]) -> bool:
    """``messages`` into ``windows`` and ``row``'s thread lists, ``hidden`` ones (observed at the new
    head) into its thread lists only (both changed in place); False if the order of a new message
    among the window's is not certain (a shared time). Linear in the batch when its messages are
    later than their windows' and not in them yet (:meth:`Windows.append`), else in window and batch."""
    threads, speaking, lists = set(row[_MESSAGE_THREADS]), set(row[_SPEAKING]), windows.lists
    gone: dict[str, set[str]] = {}  # thread → ids hidden from its window
    for m in hidden:
        threads.add(m[_THREAD])
        if m[_ROLE] != "system":
            speaking.add(m[_THREAD])
        gone.setdefault(m[_THREAD], set()).add(m[_ID])
    for thread, ids in gone.items():  # one pass a thread, not one a hidden message (an activation hides ~100)
        lists[thread] = [w for w in lists.get(thread, []) if w["id"] not in ids]
    by_thread: dict[str, list[Sequence[Any]]] = {}
    ids_by_thread: dict[str, list[str]] = {}  # system ones too: a window's copy of one is dropped
    for m in messages:
        threads.add(m[_THREAD])
        ids_by_thread.setdefault(m[_THREAD], []).append(m[_ID])
        if m[_ROLE] != "system":
            by_thread.setdefault(m[_THREAD], []).append(m)
    for thread, rows in by_thread.items():
        speaking.add(thread)
        added = [_message_fields(m) for m in sorted(rows, key=lambda r: (r[_CREATED], r[_VERSION]))]
        if windows.append(thread, added, ids_by_thread[thread]):  # the common case: the window as it was, then these
            continue
        new_ids = set(ids_by_thread[thread])
        kept = [w for w in lists.get(thread, []) if w["id"] not in new_ids]  # a redelivered one: re-added
        times = {w["created_at"] for w in kept}
        if any(m[_CREATED] in times for m in rows):
            return False
        lists[thread] = sorted(kept + added, key=lambda w: w["created_at"])  # stable: equal-time new ones by version
    row[_MESSAGE_THREADS], row[_SPEAKING] = sorted(threads), sorted(speaking)
    return True


def _move_head(row: list[Any], windows: Windows, key: ResourceKey, head: _Head,
               observed: Mapping[tuple[str, str], int], memories: Sequence[Sequence[Any]]) -> None:
    """``row`` and its ``windows`` at ``head``'s new version (changed in place): its head column, the
    windows without what is observed at or below it (a list that loses nothing is kept, text and
    all), and the newest working memory block the move brings in."""
    version, before = head.after[1], head.before[1]
    row[_HEAD] = head.column
    for thread, window in windows.lists.items():
        kept = [m for m in window if observed.get((key[1], m["id"]), version + 1) > version]
        if len(kept) < len(window):
            windows.lists[thread] = kept
    blocks = [m for m in memories if (m[0], m[1]) == key and m[_WM_KEY_VERSION] > before]  # each with its snapshot
    if blocks:
        row[_WORKING_MEMORY] = max(blocks, key=lambda m: (m[_WM_VERSION], m[_WM_KEY_VERSION]))[_WM_CONTENT]


def _message_fields(row: Sequence[Any]) -> dict[str, Any]:
    """As :func:`streams.reader.queries.unobserved_rows` reads the stored row back. The parts and the
    metadata are the row's JSON as written (``orjson.dumps``, which writes them back byte for byte
    from their parse): the window is only ever written out again (streams/sink/window_texts.py), and
    parsing them was two thirds of bringing a message forward."""
    return {"id": row[_ID], "thread_id": row[_THREAD], "resource_id": row[_MESSAGE_RESOURCE], "role": row[_ROLE],
            "created_at": row[_CREATED], "parts": orjson.Fragment(row[_PARTS]), "model": row[_MODEL],
            "metadata": orjson.Fragment(row[_METADATA]) if row[_METADATA] is not None else None}
