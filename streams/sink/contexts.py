"""The per-key context rows (``om_contexts``): after each batch, every touched key's row is rewritten.

Issue 19 item 1: the reader answers ``context()`` and ``status()`` from one row per (lookup key,
resource) fetched in one primary-key query, instead of assembling it from several queries per call.
Rules this file keeps:

* **The tables stay the source of truth.** A row is computed from what the sink has already written
  (the head generation, each thread's unobserved window, working memory, the newest status), by the
  same queries the reader used to run per call (:mod:`streams.reader.queries`), so a row says what
  those queries would have said once the batch landed. Recomputing a row again (a redelivered
  batch) writes the same content. Two shortcuts write that same content from the stored row: a
  key only events touched gets the newest status, and a key only new messages, snapshots (and
  events) touched is brought forward by them (:mod:`streams.sink.context_appends`, which says
  when it may).
  A key recomputed whose row the sink remembers takes its status, and (without messages in the
  batch) its thread lists, from that row: only events change the one, only messages and deletions
  the other (a deleted key is never remembered).
* **Written before the batch's events.** The status of a row is the newest of the stored events and
  the batch's own; the writer inserts the rows, then the events. So once an event is visible (a
  read-your-writes wait sees the fold), the row already reflects it.
* **Versions only grow.** ``version`` is this process's clock in ns, never repeating, so the newest
  recompute wins the ReplacingMergeTree merge, and a reader's cache can tell a stale row
  (:mod:`streams.reader.context_cache`). Across sink processes (server mode, after a rebalance) the
  clocks' skew can delay a key's row by that skew at most.
* Only what changes a context marks a key touched: messages, snapshots (observations count only up
  to the head's version, so observation rows alone change nothing), working memory, events,
  deletions.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

import orjson
from clickhouse_connect.driver.client import Client

from streams.reader import queries
from streams.reader.queries import ResourceKey, WindowRequest
from streams.sink.context_appends import appended_rows
from streams.sink.inserts import insert
from streams.sink.row_cache import Pinned
from streams.sink.stored_versions import StoredVersions

CONTEXT_COLUMNS = ("lookup_key", "resource_id", "head", "working_memory", "status", "status_at", "status_offset",
                   "windows", "message_threads", "speaking_threads", "version")
_STATUS, _MESSAGE_THREADS, _SPEAKING, _VERSION = 4, 8, 9, 10

# (table, index of resource_id, index of lookup_key) of the rows that change a key's context
_TOUCHING = {"om_messages": (0, 3), "om_records": (0, 1), "om_working_memory": (0, 1), "om_events": (0, 1),
             "om_deleted_keys": (0, 1)}
# the tables whose rows a stored context row can be brought forward by (streams.sink.context_appends)
_BROUGHT_FORWARD = ("om_messages", "om_records", "om_working_memory")
MAX_KEYS = 256
_EVENT_AT, _EVENT_TYPE, _EVENT_PAYLOAD, _EVENT_OFFSET = 5, 3, 8, 9

Announce = Callable[[Sequence[Sequence[Any]]], None]
"""Handed the rows just inserted, in ``CONTEXT_COLUMNS`` order (the embedded reader's cache)."""
StoredRows = Callable[[Sequence[ResourceKey]], list[list[Any] | None]]
"""Each key's stored ``om_contexts`` row (undecoded), or None."""
Withdraw = Callable[[Sequence[str]], None]
"""Handed the lookup keys of rows announced before their write failed (the embedded reader's cache drops them)."""
Stored = Callable[[Sequence[Sequence[Any]]], None]
"""Handed the ``om_events`` rows just inserted, after their keys' context rows (the embedded reader's waits)."""


class _Clock:
    """Wall-clock ns that never repeats or goes back within the process."""

    def __init__(self) -> None:
        self._last = 0
        self._lock = threading.Lock()

    def next(self) -> int:
        with self._lock:
            self._last = max(time.time_ns(), self._last + 1)
            return self._last


_CLOCK = _Clock()


def touched(pending: Mapping[str, Sequence[Sequence[Any]]]
            ) -> tuple[set[ResourceKey], set[ResourceKey], set[ResourceKey]]:
    """The ``(resource, key)`` pairs whose context the pending table rows change; among them those
    only events touch (only the status of their rows can change), and those only messages,
    snapshots (with their working memory) and events touch (:mod:`streams.sink.context_appends`)."""
    by_table = {table: {(row[resource], row[key]) for row in pending.get(table, ())}
                for table, (resource, key) in _TOUCHING.items()}
    keys = set().union(*by_table.values())
    changed = set().union(*(by_table[table] for table in _BROUGHT_FORWARD))
    others = set().union(*(k for t, k in by_table.items() if t not in (*_BROUGHT_FORWARD, "om_events")))
    return keys, by_table["om_events"] - changed - others, changed - others


def context_rows(client: Client, keys: Sequence[ResourceKey], events: Iterable[Sequence[Any]] = (), *,
                 stored: Mapping[ResourceKey, Sequence[Any]] | None = None,
                 messaged: Collection[ResourceKey] = ()) -> list[list[Any]]:
    """One ``om_contexts`` row per key from the tables as they are now; ``events`` are event rows
    written after these rows (the batch's own), counted for the newest status.

    ``stored`` has the rows this sink wrote last for some keys (streams/sink/row_cache.py): such a
    key's newest status is its stored row's or one of ``events`` (only events change it), and, unless
    the batch has messages of it (``messaged``), its thread lists are the stored row's (only
    messages and deletions change them; a deleted key is never remembered): two queries fewer."""
    keys = sorted(set(keys))
    if not keys:
        return []
    stored = stored or {}
    heads = queries.head_rows(client, keys)
    asked = [key for key in keys if key not in stored or key in messaged]
    found_threads = dict(zip(asked, queries.message_threads(client, asked) if asked else [], strict=True))
    threads = [found_threads[key] if key in found_threads else _stored_threads(stored[key]) for key in keys]
    requests = [[WindowRequest(resource, thread, key, head["version"] if head else 0)
                 for thread, speaks in sorted(found.items()) if speaks]
                for (resource, key), head, found in zip(keys, heads, threads, strict=True)]
    flat = [r for per_key in requests for r in per_key]
    windows = dict(zip(flat, queries.unobserved_rows(client, flat) if flat else [], strict=True))
    memories = queries.working_memories(client, [WindowRequest(resource, key, key, head["version"] if head else 0)
                                                 for (resource, key), head in zip(keys, heads, strict=True)])
    unknown = [key for key in keys if key not in stored]
    latest = dict(zip(unknown, queries.latest_status_rows(client, unknown) if unknown else [], strict=True))
    statuses = _newest_statuses([latest[key] if key in latest else _stored_status(stored[key]) for key in keys],
                                keys, events)
    rows = []
    for (resource, key), head, found, asked_windows, memory, status in zip(keys, heads, threads, requests, memories,
                                                                            statuses, strict=True):
        by_thread = {r.thread_id: windows[r] for r in asked_windows if windows[r]}
        rows.append([key, resource, orjson.dumps(head).decode() if head else None, memory,
                     status[2] if status else None, status[0] if status else 0, status[1] if status else 0,
                     orjson.dumps(by_thread).decode(), sorted(found), sorted(t for t, speaks in found.items() if speaks),
                     _CLOCK.next()])
    return rows


def _stored_threads(row: Sequence[Any]) -> dict[str, bool]:
    """A stored row's threads as ``message_threads`` gives them: thread -> has a non-system message."""
    speaking = set(row[_SPEAKING])
    return {thread: thread in speaking for thread in row[_MESSAGE_THREADS]}


def _stored_status(row: Sequence[Any]) -> tuple[int, int, str] | None:
    return (row[_STATUS + 1], row[_STATUS + 2], row[_STATUS]) if row[_STATUS] is not None else None


def _with_new_status(stored_rows: StoredRows, keys: Sequence[ResourceKey], events: Iterable[Sequence[Any]]
                     ) -> tuple[list[list[Any]], list[ResourceKey]]:
    """Rows whose only change is the status: the stored row with the newest status, and the keys
    that have no stored row yet (those are computed in full)."""
    stored = stored_rows(keys)
    rows = _restamped([row for row in stored if row is not None], events)
    return rows, [key for key, row in zip(keys, stored, strict=True) if row is None]


def _restamped(rows: list[list[Any]], events: Iterable[Sequence[Any]]) -> list[list[Any]]:
    """Stored rows (changed or not) with the newest of their status and ``events``'s, and a new version."""
    newest = _newest_statuses([_stored_status(row) for row in rows], [(row[1], row[0]) for row in rows], events)
    for row, status in zip(rows, newest, strict=True):
        if status is not None:
            row[_STATUS], row[_STATUS + 1], row[_STATUS + 2] = status[2], status[0], status[1]
        row[_VERSION] = _CLOCK.next()
    return rows


def write_context_rows(client: Client, keys: Sequence[ResourceKey], events: Sequence[Sequence[Any]] = (),
                       announce: Announce | None = None, status_only: Sequence[ResourceKey] = (),
                       forward: Sequence[ResourceKey] = (), pending: Mapping[str, Sequence[Sequence[Any]]] | None = None,
                       cache: Pinned | None = None) -> int:
    """Recompute and insert the rows of ``keys``, and of the shortcuts' ``status_only`` and
    ``forward`` keys (:func:`brought_forward`); then hand them to ``announce``."""
    rows, full = brought_forward(client, status_only, forward, events, pending or {}, cache)
    return insert_context_rows(client, rows + recomputed_rows(client, [*keys, *full], events, pending or {}, cache),
                               announce, cache)


def brought_forward(client: Client, status_only: Sequence[ResourceKey], forward: Sequence[ResourceKey],
                    events: Sequence[Sequence[Any]], pending: Mapping[str, Sequence[Sequence[Any]]],
                    cache: Pinned | None, behind: Mapping[str, Sequence[Sequence[Any]]] | None = None
                    ) -> tuple[list[list[Any]], list[ResourceKey]]:
    """The shortcuts' rows, and the keys they leave to :func:`recomputed_rows`: of ``status_only``
    (keys only ``events`` touch: their stored row with the newest status) and of ``forward`` (keys
    only the batch's messages, snapshots and events touch: their stored row brought forward by
    ``pending``, the batch's rows by table, when that is certain to equal a recompute). The stored
    rows come from ``cache`` when it holds them (streams/sink/row_cache.py), else from one query (a
    key a snapshot touched needs its remembered row). Neither reads the batch's own rows from the
    tables, so this may run before they are inserted; and ``behind`` has the rows of the batch
    before, which may still be being inserted (its rows of these keys are in ``cache``)."""
    rows: list[list[Any]] = []
    full: list[ResourceKey] = []
    stored_rows = _stored_rows(client, cache)
    for start in range(0, len(status_only), MAX_KEYS):
        updated, missing = _with_new_status(stored_rows, status_only[start:start + MAX_KEYS], events)
        rows += updated
        full += missing
    forward, unknown = _remembered_if_snapshot(forward, pending, cache, stored_rows)
    full += unknown
    versions = (cache.versions(client, behind or {}) if cache is not None
                else StoredVersions().loader(client, behind or {}, 0))
    for start in range(0, len(forward), MAX_KEYS):
        extended, doubtful = appended_rows(forward[start:start + MAX_KEYS], pending, stored_rows, versions)
        rows += _restamped(extended, events)
        full += doubtful
    return rows, full


def recomputed_rows(client: Client, keys: Sequence[ResourceKey], events: Sequence[Sequence[Any]],
                    pending: Mapping[str, Sequence[Sequence[Any]]], cache: Pinned | None) -> list[list[Any]]:
    """The rows of ``keys`` from the tables (``MAX_KEYS`` per round of queries, since keys travel
    as query parameters), after the batch's rows (``pending``) are inserted; a key ``cache``
    remembers takes its status and thread lists from there (:func:`context_rows`)."""
    if not keys:
        return []
    keys = sorted(set(keys))
    remembered = {key: row for key, row in zip(keys, cache.get(keys), strict=True) if row is not None} \
        if cache is not None else {}
    messaged = {(row[0], row[3]) for row in pending.get("om_messages", ())} if remembered else set()  # (resource, key)
    return [row for start in range(0, len(keys), MAX_KEYS)
            for row in context_rows(client, keys[start:start + MAX_KEYS], events, stored=remembered, messaged=messaged)]


def insert_context_rows(client: Client, rows: list[list[Any]], announce: Announce | None, cache: Pinned | None) -> int:
    """Insert ``rows``; then ``cache`` learns them and ``announce`` is handed them."""
    if not rows:
        return 0
    insert(client, "om_contexts", rows, CONTEXT_COLUMNS)
    if cache is not None:
        cache.inserted(rows)
    if announce is not None:
        announce(rows)
    return len(rows)


def _remembered_if_snapshot(keys: Sequence[ResourceKey], pending: Mapping[str, Sequence[Sequence[Any]]],
                            cache: Pinned | None, stored_rows: StoredRows) -> tuple[list[ResourceKey], list[ResourceKey]]:
    """``keys`` split: those a stored row can be brought forward for, and those a snapshot or a
    working memory block touched whose row this sink does not remember (only its own last row is
    known to include every row of the key but the batch's: streams/sink/context_appends.py) and
    that has a row in the table. A key with no row there has had no flush yet: nothing but the
    batch to bring forward."""
    snapshot = {(row[0], row[1]) for table in ("om_records", "om_working_memory") for row in pending.get(table, ())}
    asked = [key for key in keys if key in snapshot]
    if not asked:
        return list(keys), []
    remembered = {key for key, row in zip(asked, cache.get(asked), strict=True) if row is not None} \
        if cache is not None else set()
    others = [key for key in asked if key not in remembered]
    unknown = {key for key, row in zip(others, stored_rows(others), strict=True) if row is not None} if others else set()
    return [key for key in keys if key not in unknown], sorted(unknown)


def _stored_rows(client: Client, cache: Pinned | None) -> StoredRows:
    """Stored rows by key: remembered ones from ``cache``, the others in one query (each key's
    answer kept for the next call: one write asks once)."""
    fetched: dict[ResourceKey, list[Any] | None] = {}

    def stored(keys: Sequence[ResourceKey]) -> list[list[Any] | None]:
        found = cache.get(keys) if cache is not None else [None] * len(keys)
        missing = [key for key, row in zip(keys, found, strict=True) if row is None and key not in fetched]
        if missing:
            fetched.update(zip(missing, queries.stored_context_rows(client, missing), strict=True))
        return [row if row is not None else (list(fetched[key]) if fetched[key] is not None else None)
                for key, row in zip(keys, found, strict=True)]
    return stored


_MISSING = """
SELECT DISTINCT resource_id, lookup_key FROM (
    SELECT resource_id, lookup_key FROM om_messages UNION ALL SELECT resource_id, lookup_key FROM om_records)
WHERE (lookup_key, resource_id) NOT IN (SELECT lookup_key, resource_id FROM om_contexts)
"""


def backfill(client: Client) -> int:
    """Rows for the keys stored before this table existed (a database upgraded in place)."""
    missing: list[ResourceKey] = [(resource, key) for resource, key in client.query(_MISSING).result_rows]
    write_context_rows(client, missing)
    return len(missing)


def _newest_statuses(stored: Sequence[tuple[int, int, str] | None], keys: Sequence[ResourceKey],
                     events: Iterable[Sequence[Any]]) -> list[tuple[int, int, str] | None]:
    """Per key the newest status ``(at, offset, payload)`` by (at, offset), stored or among ``events``."""
    newest = {key: found for key, found in zip(keys, stored, strict=True) if found is not None}
    wanted = set(keys)
    for row in events:
        key = (row[0], row[1])
        if row[_EVENT_TYPE] != "status" or key not in wanted:
            continue
        candidate = (row[_EVENT_AT], row[_EVENT_OFFSET], row[_EVENT_PAYLOAD])
        if key not in newest or candidate[:2] > newest[key][:2]:
            newest[key] = candidate
    return [newest.get(key) for key in keys]
