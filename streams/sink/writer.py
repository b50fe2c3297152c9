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
own insert: what a wait returns is the row. All of them are handed again once inserted: a wait
that was told of no fold needs no query to know none was stored.

The rows the shortcuts write (a key's stored row brought forward by the batch) read nothing the
batch inserts, so they are computed first and handed to ``landing`` and their events to
``stored`` before any insert: in the embedded worker a read-your-writes wait returns them while
the batch is still being written, its inserts no longer on the wait's path. They are inserted with
the others, in the order above; a write that fails after announcing them hands their keys to
``withdraw`` (the reader's cache drops them, and reads the tables again), and is retried.

That start may even run before the batches ahead of it have landed (:func:`prepare_batch` with
them ``behind``: the sink starts each batch as it is collected, and writes the started ones
together, :meth:`Prepared.merged`). Their rows then count as stored: the rows they brought forward
are in the row cache from the moment they were computed, their messages' versions and observation
rows in its stored versions (streams/sink/stored_versions.py), and a key whose row one of them
recomputes is recomputed by this batch too. A start whose row cache was dropped meanwhile (a batch ahead failed, partitions were
revoked) announces nothing more, and its write withdraws what it did announce and starts over.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from clickhouse_connect.driver.client import Client

from schemas.deltas import KeyDeleted
from streams.sink.contexts import (Announce, Stored, Withdraw, brought_forward, insert_context_rows, recomputed_rows,
                                   touched)
from streams.sink.inserts import insert
from streams.sink.row_cache import Pinned, ResourceKey, RowCache
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


@dataclass(frozen=True)
class Prepared:
    """A batch's start, done before the batch before it has landed (:func:`prepare_batch`): its rows
    by table, the shortcuts' rows it announced (``start``; None: nothing was computed, a deletion
    is in the batch), the lookup keys it handed to ``landing``, and the row cache as it saw it."""

    pending: dict[str, list[list]]
    start: _Start | None
    early: tuple[str, ...]
    cache: Pinned | None

    def in_flight(self) -> InFlight | None:
        """What the batch, while it is being written, means for the next one's start (None: the
        next one must wait for it: it deletes)."""
        return InFlight.of([self])

    @staticmethod
    def merged(started: Sequence[Prepared]) -> Prepared:
        """Batches started one after another (each with the ones before it ``behind``), written as
        one: their rows in order, each key's newest shortcut row, the keys any of them leaves to
        the recompute, the events any handed over early."""
        if len(started) == 1:
            return started[0]
        assert all(p.start is not None for p in started), "only started batches merge"
        pending: dict[str, list[list]] = {}
        newest: dict[ResourceKey, list[Any]] = {}
        recomputed: dict[ResourceKey, None] = {}
        for prepared in started:
            for table, rows in prepared.pending.items():
                pending.setdefault(table, []).extend(rows)
            assert prepared.start is not None
            newest.update(((row[1], row[0]), row) for row in prepared.start.rows)  # a later start's row is newer
            recomputed.update(dict.fromkeys(prepared.start.recomputed))
        handed = frozenset().union(*(p.start.handed for p in started if p.start is not None))
        return Prepared(pending, _Start(list(newest.values()), list(recomputed), handed),
                        tuple(key for p in started for key in p.early), started[0].cache)


@dataclass(frozen=True)
class InFlight:
    """A batch being written: its rows by table, and the keys whose context rows it recomputes
    after its inserts (the only ones of its keys whose rows the row cache does not hold yet)."""

    pending: Mapping[str, Sequence[Sequence[Any]]]
    recomputed: frozenset[ResourceKey]
    cache: Pinned  # the row cache as it saw it: the next batch's start holds only while this is current

    @staticmethod
    def of(started: Sequence[Prepared | None]) -> InFlight | None:
        """The batches ``started`` (in order, none landed yet) as one, for the next start; None if
        one of them cannot have a batch started behind it (it deletes, or was not started itself)."""
        ready = [p for p in started if p is not None and p.start is not None and p.cache is not None]
        if not started or len(ready) < len(started):
            return None
        merged = Prepared.merged(ready)
        assert merged.start is not None and merged.cache is not None
        return InFlight(merged.pending, frozenset(merged.start.recomputed), merged.cache)


def prepare_batch(client: Client, batch: Sequence[Rows], landing: Announce | None = None,
                  stored: Stored | None = None, cache: RowCache | None = None,
                  behind: InFlight | None = None) -> Prepared:
    """The start of writing ``batch``, which inserts nothing: its shortcuts' rows computed, handed to
    ``landing`` (their events to ``stored``) and remembered in ``cache``. ``behind`` is the batch
    before while it may still be being inserted: its rows count as stored, and a key whose row it
    recomputes is left to this batch's recompute; the rows ``behind`` brought forward are in the
    row cache as ``behind`` saw it, and if that was dropped since (``behind`` failed, partitions were
    revoked) nothing is announced, and :func:`write_batch` starts over. A batch with a deletion is
    only gathered: :func:`write_batch` does all of it; so must a batch behind one
    (:meth:`Prepared.in_flight` is None), unprepared."""
    pending = _gathered(batch)
    pinned = behind.cache if behind is not None else cache.pinned() if cache is not None else None
    if _deleting(batch) or (pinned is not None and not pinned.current):
        return Prepared(pending, None, (), pinned)
    early: list[str] = []
    start = _begin(client, pending, set(), landing, stored, pinned, early, behind)
    return Prepared(pending, start, tuple(early), pinned)


def write_batch(client: Client, batch: Sequence[Rows], announce: Announce | None = None,
                stored: Stored | None = None, cache: RowCache | None = None, withdraw: Withdraw | None = None,
                landing: Announce | None = None, prepared: Prepared | None = None) -> int:
    """Insert ``batch`` (and run its deletions) in order; returns the number of rows inserted.
    ``announce`` is handed the context rows inserted (the embedded reader's cache), ``landing`` the
    shortcuts' rows before they are, ``stored`` the event rows (its waits), and ``withdraw`` the
    lookup keys of rows handed to ``landing`` before a write that then failed; ``cache`` is the
    sink's memory of its context rows, forgotten when a write fails (what landed is not known) and
    for a deleted key. ``prepared`` is the batch's start (:func:`prepare_batch`), done while the
    batch before was written: if everything was forgotten since (that batch failed, or partitions
    were revoked), what it announced is withdrawn and the batch is written from the start."""
    early: list[str] = list(prepared.early) if prepared is not None else []
    try:
        if prepared is not None and prepared.start is not None:
            if prepared.cache is None or prepared.cache.current:
                return _finish(client, prepared.pending, set(), prepared.start, announce, stored, prepared.cache)
            if withdraw is not None and early:
                withdraw(early)
            early.clear()
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


class _Start(NamedTuple):
    """The shortcuts' rows of a segment (announced), the keys they leave to the recompute, and the
    event rows handed to the waits with them (by identity: handed once, not again after the insert)."""

    rows: list[list[Any]]
    recomputed: list[ResourceKey]
    handed: frozenset[int]


def _gathered(batch: Sequence[Rows]) -> dict[str, list[list]]:
    pending: dict[str, list[list]] = {}
    for item in batch:
        for table, rows in item.rows.items():
            pending.setdefault(table, []).extend(rows)
    return pending


def _deleting(batch: Sequence[Rows]) -> bool:
    return any(item.deletion is not None for item in batch)


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
    start = _begin(client, pending, deleted, announce.landing, stored, cache, early, None)
    return _finish(client, pending, deleted, start, announce.inserted, stored, cache)


def _begin(client: Client, pending: dict[str, list[list]], deleted: set[tuple[str, str]], landing: Announce | None,
           stored: Stored | None, cache: Pinned | None, early: list[str], behind: InFlight | None) -> _Start:
    """The shortcuts' context rows, announced before anything is inserted (their keys noted in
    ``early``, the rows remembered in ``cache``), and the keys left to the recompute; a key whose
    row the batch ``behind`` recomputes is left to it too."""
    events = pending.get("om_events", [])
    keys, status_only, forward = touched(pending)
    later = deleted | (behind.recomputed if behind is not None else frozenset())
    status_only -= later
    forward -= later
    rows, full = brought_forward(client, sorted(status_only), sorted(forward), events, pending, cache,
                                 behind.pending if behind is not None else None)
    shown = {(row[1], row[0]) for row in rows}  # (resource, lookup key)
    if cache is not None:  # the next batch's start may bring them forward before they are inserted
        cache.learn(pending)
        if rows:
            cache.inserted(rows)

    handed = [event for event in events if (event[0], event[1]) in shown]

    def announced() -> None:  # a wait they end returns these rows; they are inserted later
        early.extend(key for _, key in shown)
        landing(rows)
        if stored is not None:
            stored(handed)
    if not rows or landing is None or (cache is not None and not cache.while_current(announced)):
        handed = []
    elif cache is None:
        announced()
    return _Start(rows, [*full, *((keys | deleted) - status_only - forward)], frozenset(map(id, handed)))


def _finish(client: Client, pending: dict[str, list[list]], deleted: set[tuple[str, str]], start: _Start,
            announce: Announce | None, stored: Stored | None, cache: Pinned | None) -> int:
    """The rows in table order; the other touched keys' context rows recomputed; all the context
    rows inserted; then the events and the cost ledger's rows (which no context row reads)."""
    count = 0
    events = pending.get("om_events", [])
    for table in TABLE_ORDER:
        table_rows = pending.get(table)
        if table_rows and table not in _AFTER_CONTEXTS:
            insert(client, table, table_rows, COLUMNS[table])
            count += len(table_rows)
    insert_context_rows(client, start.rows + recomputed_rows(client, start.recomputed, events, pending, cache),
                        announce, cache)
    if events:
        if stored is not None:  # the rows written show these events: a wait may end before their insert
            stored([event for event in events if id(event) not in start.handed])
        insert(client, "om_events", events, COLUMNS["om_events"])
        count += len(events)
        if stored is not None:  # all again, now in the table: a wait that began after a hand-over and
            stored(events)  # looked too soon learns it here (streams/reader/fold_watch.py counts on it)
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
