"""The SQL behind recall's browsing modes; every query is bound to one resource.

Rules this file keeps:

* ``resource_id`` is a bound parameter of every query, so an id from another resource finds
  nothing, exactly like an id that does not exist; callers cannot tell the two apart.
* Caller-supplied ids only ever travel as server-side ``{name:Type}`` parameters.
* "Visible" messages are the ones recall shows: not ``system``, not hidden by a deletion
  tombstone of their thread or resource, and with at least one part a model would see (not
  ``data-*``, not ``step-start``). Filtering in SQL keeps pages full: a page of 20 is 20 shown
  messages, however many bookkeeping-only messages sit between them.
* Order within a thread is ``(created_at, id)``, so messages sharing a millisecond are neither
  skipped nor repeated when paging across them.
"""

from __future__ import annotations

from typing import Any

import orjson
from clickhouse_connect.driver.client import Client

from processors.recall.threads import ThreadInfo
from schemas.messages import ChatMessage

_VISIBLE = """
WITH tombstones AS (
    SELECT thread_id, max(deleted_at) AS cut FROM om_deleted_keys FINAL
    WHERE resource_id = {resource:String} GROUP BY thread_id)
SELECT m.id, m.thread_id, m.role, m.created_at, m.parts, m.model, m.metadata, m.message_resource_id
FROM om_messages AS m FINAL
LEFT JOIN tombstones AS t ON t.thread_id = m.thread_id
WHERE m.resource_id = {resource:String}
  AND m.role != 'system' AND m.refused = 0
  AND m.created_at > greatest(
        if(t.thread_id = '', -1, t.cut),
        (SELECT if(count() = 0, -1, max(cut)) FROM tombstones WHERE thread_id = ''))
  AND arrayExists(
        p -> NOT (startsWith(JSONExtractString(p, 'type'), 'data-') OR JSONExtractString(p, 'type') = 'step-start'),
        JSONExtractArrayRaw(m.parts))
"""

_BY_ID = _VISIBLE + " AND m.id = {id:String} LIMIT 1"

_AFTER = _VISIBLE + """ AND m.thread_id = {thread:String}
  AND (m.created_at, m.id) > ({at:Int64}, {id:String})
ORDER BY m.created_at, m.id LIMIT {limit:UInt32}"""

_BEFORE = _VISIBLE + """ AND m.thread_id = {thread:String}
  AND (m.created_at, m.id) < ({at:Int64}, {id:String})
ORDER BY m.created_at DESC, m.id DESC LIMIT {limit:UInt32}"""

_FROM_START = _VISIBLE + " AND m.thread_id = {thread:String} ORDER BY m.created_at, m.id LIMIT {limit:UInt32}"
_FROM_END = _VISIBLE + " AND m.thread_id = {thread:String} ORDER BY m.created_at DESC, m.id DESC LIMIT {limit:UInt32}"

_THREADS = """
WITH threads AS (
    SELECT id, thread_id, created_at FROM ({visible})
), titles AS (
    SELECT key AS thread_id, argMax(title, (generation, version)) AS title
    FROM om_records FINAL ARRAY JOIN mapKeys(thread_titles) AS key, mapValues(thread_titles) AS title
    WHERE resource_id = {{resource:String}}
    GROUP BY key)
SELECT t.thread_id, any(ti.title), min(t.created_at) AS created, max(t.created_at) AS updated
FROM threads AS t LEFT JOIN titles AS ti ON ti.thread_id = t.thread_id
WHERE ({{thread:String}} = '' OR t.thread_id = {{thread:String}})
GROUP BY t.thread_id
HAVING ({{after:Int64}} < 0 OR created > {{after:Int64}}) AND ({{before:Int64}} < 0 OR created < {{before:Int64}})
ORDER BY updated DESC, t.thread_id
LIMIT {{limit:UInt32}} OFFSET {{offset:UInt32}}
""".format(visible=_VISIBLE)


def message_by_id(client: Client, resource_id: str, message_id: str) -> ChatMessage | None:
    """The visible message with this id in this resource, or ``None``."""
    rows = _rows(client, _BY_ID, {"resource": resource_id, "id": message_id})
    return rows[0] if rows else None


def messages_next_to(client: Client, resource_id: str, anchor: ChatMessage, *, after: bool, limit: int) -> list[ChatMessage]:
    """Up to ``limit`` visible messages of the anchor's thread, nearest to it first."""
    params = {"resource": resource_id, "thread": anchor.thread_id, "at": anchor.created_at, "id": anchor.id, "limit": limit}
    return _rows(client, _AFTER if after else _BEFORE, params)


def messages_from_end(client: Client, resource_id: str, thread_id: str, *, newest_first: bool, limit: int) -> list[ChatMessage]:
    params = {"resource": resource_id, "thread": thread_id, "limit": limit}
    return _rows(client, _FROM_END if newest_first else _FROM_START, params)


def threads(
    client: Client,
    resource_id: str,
    *,
    limit: int,
    offset: int = 0,
    thread_id: str | None = None,
    after: int | None = None,
    before: int | None = None,
) -> list[ThreadInfo]:
    """Threads with visible messages, most recently active first; ``thread_id`` picks one."""
    params = {
        "resource": resource_id, "thread": thread_id or "", "limit": limit, "offset": offset,
        "after": -1 if after is None else after, "before": -1 if before is None else before,
    }
    rows = client.query(_THREADS, parameters=params).result_rows
    return [ThreadInfo(tid, title or None, int(created), int(updated)) for tid, title, created, updated in rows]


def thread_titles(client: Client, resource_id: str, thread_ids: list[str]) -> dict[str, ThreadInfo]:
    """The named threads of this resource (others are simply absent)."""
    found: dict[str, ThreadInfo] = {}
    for thread_id in thread_ids:
        for info in threads(client, resource_id, limit=1, thread_id=thread_id):
            found[info.id] = info
    return found


def _rows(client: Client, sql: str, params: dict[str, Any]) -> list[ChatMessage]:
    return [_message(row) for row in client.query(sql, parameters=params).result_rows]


def _message(row: tuple[Any, ...]) -> ChatMessage:
    mid, thread_id, role, created_at, parts, model, metadata, resource = row
    return ChatMessage.model_validate({
        "id": mid, "thread_id": thread_id, "resource_id": resource, "role": role, "created_at": created_at,
        "parts": orjson.loads(parts), "model": model,
        "metadata": orjson.loads(metadata) if metadata is not None else None,
    })
