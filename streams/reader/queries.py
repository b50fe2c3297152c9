"""The reader's SQL, one function per question; synchronous (callers run them in a thread).

Rules this file keeps:

* Every query names ``resource_id`` or reaches its rows through a key that a resource-bound query
  returned first; a caller's ids are only ever bound as server-side ``{name:Type}`` parameters.
* Consistency: the unobserved messages are taken relative to the head record's version (only
  observation rows at or below it count), and the sink inserts observation rows before records.
  So a reader never sees a message leave the window before the observations that cover it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
from clickhouse_connect.driver.client import Client

from schemas.lifecycle import StatusEvent, decode_event
from schemas.messages import ChatMessage
from schemas.record import ThreadMeta

_HEAD = """
SELECT lookup_key, generation, version, active_observations, observed_timezone, threads
FROM om_records FINAL
WHERE resource_id = {resource:String} AND lookup_key = {key:String}
ORDER BY generation DESC
LIMIT 1
"""

_OWNED_ELSEWHERE = """
SELECT count() > 0 FROM om_records
WHERE lookup_key = {key:String} AND resource_id != {resource:String}
"""

_THREAD_HAS_MESSAGES = """
SELECT count() > 0 FROM om_messages
WHERE resource_id = {resource:String} AND thread_id = {thread:String}
"""

_UNOBSERVED = """
SELECT id, role, created_at, parts, model, metadata, message_resource_id
FROM om_messages FINAL
WHERE resource_id = {resource:String} AND thread_id = {thread:String} AND role != 'system'
  AND created_at > (
    SELECT if(count() = 0, -1, max(deleted_at)) FROM om_deleted_keys FINAL
    WHERE resource_id = {resource:String} AND lookup_key = {key:String})
  AND id NOT IN (
    SELECT message_id FROM om_message_observations FINAL
    WHERE lookup_key = {key:String} AND version <= {version:UInt64})
ORDER BY created_at, version
"""

_LATEST_STATUS = """
SELECT payload FROM om_events FINAL
WHERE resource_id = {resource:String} AND lookup_key = {key:String} AND type = 'status'
ORDER BY at DESC, offset DESC
LIMIT 1
"""

_CAUGHT_UP = """
SELECT
  (SELECT count() > 0 FROM om_events
   WHERE resource_id = {resource:String} AND lookup_key = {key:String} AND type = 'status'
     AND applied_message_id = {message:String})
  AND
  (SELECT count() > 0 FROM om_messages
   WHERE resource_id = {resource:String} AND thread_id = {thread:String} AND id = {message:String})
"""


@dataclass(frozen=True)
class Head:
    """The head generation of a key, as far as the reader needs it."""

    key: str
    generation: int
    version: int
    active_observations: str
    timezone: str
    threads: dict[str, ThreadMeta]


def head(client: Client, resource_id: str, key: str) -> Head | None:
    rows = client.query(_HEAD, parameters={"resource": resource_id, "key": key}).result_rows
    if not rows:
        return None
    key, generation, version, observations, timezone, threads = rows[0]
    metas = {tid: ThreadMeta.model_validate(meta) for tid, meta in orjson.loads(threads).items()}
    return Head(key, int(generation), int(version), observations, timezone, metas)


def owned_elsewhere(client: Client, resource_id: str, key: str) -> bool:
    """Whether another resource owns ``key`` (a thread id belongs to one resource for life)."""
    return bool(client.query(_OWNED_ELSEWHERE, parameters={"resource": resource_id, "key": key}).first_row[0])


def thread_has_messages(client: Client, resource_id: str, thread_id: str) -> bool:
    params = {"resource": resource_id, "thread": thread_id}
    return bool(client.query(_THREAD_HAS_MESSAGES, parameters=params).first_row[0])


def unobserved_messages(client: Client, resource_id: str, thread_id: str, key: str, version: int) -> list[ChatMessage]:
    """The thread's messages no observation at or below ``version`` covers, oldest first."""
    params = {"resource": resource_id, "thread": thread_id, "key": key, "version": version}
    rows = client.query(_UNOBSERVED, parameters=params).result_rows
    return [_message(thread_id, row) for row in rows]


_WORKING_MEMORY = """
SELECT content FROM om_working_memory FINAL
WHERE resource_id = {resource:String} AND lookup_key = {key:String}
ORDER BY wm_version DESC LIMIT 1
"""


def working_memory(client: Client, resource_id: str, key: str) -> str | None:
    rows = client.query(_WORKING_MEMORY, parameters={"resource": resource_id, "key": key}).result_rows
    return rows[0][0] if rows else None


def latest_status(client: Client, resource_id: str, key: str) -> StatusEvent | None:
    rows = client.query(_LATEST_STATUS, parameters={"resource": resource_id, "key": key}).result_rows
    if not rows:
        return None
    event = decode_event(rows[0][0])
    assert isinstance(event, StatusEvent)
    return event


def caught_up(client: Client, resource_id: str, thread_id: str, key: str, message_id: str) -> bool:
    """Whether the message is stored and the processor's fold of it is materialised."""
    params = {"resource": resource_id, "thread": thread_id, "key": key, "message": message_id}
    return bool(client.query(_CAUGHT_UP, parameters=params).first_row[0])


def _message(thread_id: str, row: tuple[Any, ...]) -> ChatMessage:
    mid, role, created_at, parts, model, metadata, resource = row
    return ChatMessage.model_validate({
        "id": mid, "thread_id": thread_id, "resource_id": resource, "role": role, "created_at": created_at,
        "parts": orjson.loads(parts), "model": model,
        "metadata": orjson.loads(metadata) if metadata is not None else None,
    })
