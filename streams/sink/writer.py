"""Write one batch of converted records to ClickHouse, in log order, idempotently.

A batch is written as segments cut at each key deletion: the rows before it, then the deletion's
DELETE statements, then the rest. Writing a batch again from the start (a retry after a failure
half-way, or a redelivery after a crash) ends in the same tables, because every insert replaces
itself by version and every DELETE removes the same rows again.

Deletion uses lightweight ``DELETE`` rather than ``is_deleted`` rows: a deleted key's state
restarts from version 1 if the thread is used again, so old rows must really go, and a DELETE by
(resource, key) needs no read of what to tombstone. Messages and events, which arrive on other
topics than the deletion, are deleted up to the deletion's time only, and the reader hides older
ones that land later (``om_deleted_keys``).

After each segment's rows, the context rows of the keys they touch are rewritten as the tables now
say (:mod:`streams.sink.contexts`) and inserted, and only then the segment's events: a reader that sees
an event finds a context row at least that new. A deleted key's row goes with its other rows and is
recomputed after the deletion. The cost ledger's rows (``om_model_calls``), which no context row
reads, go last, after the events. The events are handed to ``stored`` (the embedded reader's waits,
:mod:`streams.reader.fold_watch`) once the context rows that show them are written, before their
own insert: what a wait returns is the row.

The rows the shortcuts write (a key's stored row brought forward by the batch) read nothing the
batch inserts, so they are computed first and handed to ``landing`` and their events to
``stored`` before any insert: in the embedded worker a read-your-writes wait returns them while
the batch is still being written, its inserts no longer on the wait's path. They are inserted with
the others, in the order above; a write that fails after announcing them hands their keys to
``withdraw`` (the reader's cache drops them, and reads the tables again), and is retried.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import NamedTuple

from clickhouse_connect.driver.client import Client

from schemas.deltas import KeyDeleted
from streams.sink.contexts import (Announce, Stored, Withdraw, brought_forward, insert_context_rows, recomputed_rows,
                                   touched)
from streams.sink.inserts import insert
from streams.sink.row_cache import Pinned, RowCache
from streams.sink.rows import COLUMNS, TABLE_ORDER, Rows

log = logging.getLogger(__name__)
_AFTER_CONTEXTS = ("om_events", "om_model_calls")  # inserted after the context rows (see _insert)

_DELETE_THREAD_MESSAGES = (
    "DELETE FROM om_messages WHERE resource_id = {resource:String} AND thread_id = {thread:String} "
    "AND created_at <= {at:Int64}"
)
_DELETE_RESOURCE_MESSAGES = (
    "DELETE FROM om_messages WHERE resource_id = {resource:String} AND lookup_key = {key:String} "
    "AND created_at <= {at:Int64}"
)
_DELETE_BY_KEY = (
    "DELETE FROM om_message_observations WHERE lookup_key = {key:String}",
    "DELETE FROM om_observation_chunks WHERE lookup_key = {key:String}",
    "DELETE FROM om_events WHERE resource_id = {resource:String} AND lookup_key = {key:String} AND at <= {at:Int64}",
    "DELETE FROM om_records WHERE resource_id = {resource:String} AND lookup_key = {key:String}",
    "DELETE FROM om_working_memory WHERE resource_id = {resource:String} AND lookup_key = {key:String}",
    "DELETE FROM om_contexts WHERE lookup_key = {key:String} AND resource_id = {resource:String}",
)


def write_batch(client: Client, batch: Sequence[Rows], announce: Announce | None = None,
                stored: Stored | None = None, cache: RowCache | None = None, withdraw: Withdraw | None = None,
                landing: Announce | None = None) -> int:
    """Insert ``batch`` (and run its deletions) in order; returns the number of rows inserted.
    ``announce`` is handed the context rows inserted (the embedded reader's cache), ``landing`` the
    shortcuts' rows before they are, ``stored`` the event rows (its waits), and ``withdraw`` the
    lookup keys of rows handed to ``landing`` before a write that then failed; ``cache`` is the
    sink's memory of its context rows, forgotten when a write fails (what landed is not known) and
    for a deleted key."""
    early: list[str] = []
    try:
        return _write(client, batch, _Announcers(announce, landing), stored,
                      cache.pinned() if cache is not None else None, early)
    except BaseException:
        if cache is not None:
            cache.forget()
        if withdraw is not None and early:
            withdraw(early)
        raise


class _Announcers(NamedTuple):
    inserted: Announce | None
    landing: Announce | None


def _write(client: Client, batch: Sequence[Rows], announce: _Announcers, stored: Stored | None,
           cache: Pinned | None, early: list[str]) -> int:
    pending: dict[str, list[list]] = {}
    deleted: set[tuple[str, str]] = set()
    inserted = 0
    for item in batch:
        for table, rows in item.rows.items():
            pending.setdefault(table, []).extend(rows)
        if item.deletion is not None:
            inserted += _insert(client, pending, deleted, announce, stored, cache, early)
            pending = {}
            deleted = {(item.deletion.resource_id, item.deletion.key)}
            if cache is not None:
                cache.forget(deleted)
            _delete(client, item.deletion)
    return inserted + _insert(client, pending, deleted, announce, stored, cache, early)


def _insert(client: Client, pending: dict[str, list[list]], deleted: set[tuple[str, str]],
            announce: _Announcers, stored: Stored | None, cache: Pinned | None, early: list[str]) -> int:
    """The shortcuts' context rows, announced before anything is inserted (their keys noted in
    ``early``); the rows in table order; the other touched keys' context rows recomputed; all the
    context rows inserted; then the events and the cost ledger's rows (which no context row reads)."""
    count = 0
    events = pending.get("om_events", [])
    keys, status_only, forward = touched(pending)
    status_only -= deleted
    forward -= deleted
    rows, full = brought_forward(client, sorted(status_only), sorted(forward), events, pending, cache)
    shown = {(row[1], row[0]) for row in rows}  # (resource, lookup key)
    if rows and announce.landing is not None:  # a wait they end returns these rows; they are inserted below
        early.extend(key for _, key in shown)
        announce.landing(rows)
        if stored is not None:
            stored([event for event in events if (event[0], event[1]) in shown])
    for table in TABLE_ORDER:
        table_rows = pending.get(table)
        if table_rows and table not in _AFTER_CONTEXTS:
            insert(client, table, table_rows, COLUMNS[table])
            count += len(table_rows)
    full = [*full, *((keys | deleted) - status_only - forward)]
    insert_context_rows(client, rows + recomputed_rows(client, full, events, pending, cache), announce.inserted,
                        cache)
    if events:
        if stored is not None:  # the rows written show these events: a wait may end before their insert
            stored([event for event in events if announce.landing is None or (event[0], event[1]) not in shown])
        insert(client, "om_events", events, COLUMNS["om_events"])
        count += len(events)
    calls = pending.get("om_model_calls")
    if calls:  # no context row reads the ledger: after the wake, not before it
        insert(client, "om_model_calls", calls, COLUMNS["om_model_calls"])
        count += len(calls)
    return count


def _delete(client: Client, deletion: KeyDeleted) -> None:
    params = {"resource": deletion.resource_id, "key": deletion.key, "at": deletion.at,
              "thread": deletion.thread_id or ""}
    messages = _DELETE_THREAD_MESSAGES if deletion.thread_id else _DELETE_RESOURCE_MESSAGES
    for statement in (messages, *_DELETE_BY_KEY):
        client.command(statement, parameters=params)
    log.info("sink.key.deleted", extra={"key": deletion.key, "version": deletion.version})
