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
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from clickhouse_connect.driver.client import Client

from schemas.deltas import KeyDeleted
from streams.sink.rows import COLUMNS, TABLE_ORDER, Rows

log = logging.getLogger(__name__)

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
)


def write_batch(client: Client, batch: Sequence[Rows]) -> int:
    """Insert ``batch`` (and run its deletions) in order; returns the number of rows inserted."""
    pending: dict[str, list[list]] = {}
    inserted = 0
    for item in batch:
        for table, rows in item.rows.items():
            pending.setdefault(table, []).extend(rows)
        if item.deletion is not None:
            inserted += _insert(client, pending)
            pending = {}
            _delete(client, item.deletion)
    return inserted + _insert(client, pending)


def _insert(client: Client, pending: dict[str, list[list]]) -> int:
    count = 0
    for table in TABLE_ORDER:
        rows = pending.get(table)
        if rows:
            client.insert(table, rows, column_names=list(COLUMNS[table]))
            count += len(rows)
    return count


def _delete(client: Client, deletion: KeyDeleted) -> None:
    params = {"resource": deletion.resource_id, "key": deletion.key, "at": deletion.at,
              "thread": deletion.thread_id or ""}
    messages = _DELETE_THREAD_MESSAGES if deletion.thread_id else _DELETE_RESOURCE_MESSAGES
    for statement in (messages, *_DELETE_BY_KEY):
        client.command(statement, parameters=params)
    log.info("sink.key.deleted", extra={"key": deletion.key, "version": deletion.version})
