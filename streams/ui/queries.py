"""The memory view's SQL: what a page shows, one small query per question; synchronous.

Rules this file keeps (the reader's, streams/reader/queries.py):

* Every query names ``resource_id``, or reaches its rows through a lookup key that the reader
  resolved for that resource first (:meth:`streams.reader.api.Reader.resolve`); ids are only ever
  bound as server-side ``{name:Type}`` parameters, never formatted into the SQL.
* Every list is paged (``LIMIT``/``OFFSET``, the count as a window over the same rows), so a
  10,000-message thread costs a page, not the thread.
* Deleted keys stay deleted: messages at or before a key's newest tombstone are not shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import orjson
from clickhouse_connect.driver.client import Client

from schemas.lifecycle import LifecycleEvent, StatusEvent, decode_event
from schemas.record import ThreadMeta

MessageFilter = Literal["all", "unobserved", "cycle"]

_THREADS = """
SELECT thread_id, count(), max(created_at), count() OVER () FROM om_messages FINAL
WHERE resource_id = {resource:String} AND role != 'system' AND refused = 0
GROUP BY thread_id ORDER BY max(created_at) DESC, thread_id
LIMIT {limit:UInt32} OFFSET {offset:UInt32}
"""

_HEADS = """
SELECT lookup_key, generation, threads, observation_token_count FROM om_records FINAL
WHERE resource_id = {resource:String}
ORDER BY generation DESC LIMIT 1 BY lookup_key
"""

_STATUSES = """
SELECT lookup_key, payload FROM om_events FINAL
WHERE resource_id = {resource:String} AND type = 'status'
ORDER BY at DESC, offset DESC LIMIT 1 BY lookup_key
"""

_CUT = """ifNull((SELECT max(deleted_at) FROM om_deleted_keys
              WHERE resource_id = {resource:String} AND lookup_key = {key:String}), -1)"""

_OBSERVED = """SELECT message_id FROM om_message_observations FINAL
                WHERE lookup_key = {key:String} AND version <= {version:UInt64}"""

_MESSAGE_FILTERS = {
    "all": "",
    "unobserved": f"AND id NOT IN ({_OBSERVED})",
    "cycle": f"AND id IN ({_OBSERVED} AND cycle_id = {{cycle:String}})",
}

# Two steps, so that a 10,000-message thread is sorted on its light columns only: the page's ids
# (and the filter's count, computed before LIMIT), then the page's text and observation marks.
_MESSAGE_PAGE = """
SELECT id, role, created_at, count() OVER () FROM om_messages FINAL
WHERE resource_id = {{resource:String}} AND thread_id = {{thread:String}} AND role != 'system' AND refused = 0
  AND created_at > {cut} {condition}
ORDER BY created_at DESC, id DESC
LIMIT {{limit:UInt32}} OFFSET {{offset:UInt32}}
"""

_MESSAGE_BODIES = """
SELECT id, parts FROM om_messages FINAL
WHERE resource_id = {resource:String} AND thread_id = {thread:String} AND id IN {ids:Array(String)}
"""

_MESSAGE_MARKS = """
SELECT message_id, cycle_id FROM om_message_observations FINAL
WHERE lookup_key = {key:String} AND version <= {version:UInt64} AND message_id IN {ids:Array(String)}
"""

_CHUNKS = """
SELECT chunk_id, cycle_id, observations, token_count, message_tokens, message_ids, created_at
FROM om_observation_chunks FINAL
WHERE lookup_key = {key:String} AND status = 'buffered' AND generation = {generation:UInt32}
ORDER BY created_at, chunk_id
"""

_EVENTS = """
SELECT payload, offset, count() OVER () FROM om_events FINAL
WHERE resource_id = {resource:String} AND lookup_key = {key:String} AND type IN {types:Array(String)}
  AND ({cycle:String} = '' OR cycle_id = {cycle:String})
ORDER BY at DESC, offset DESC
LIMIT {limit:UInt32} OFFSET {offset:UInt32}
"""

_CYCLE_EVENTS = """
SELECT payload FROM om_events FINAL
WHERE resource_id = {resource:String} AND lookup_key = {key:String} AND cycle_id IN {cycles:Array(String)}
  AND type != 'status'
ORDER BY at, offset
"""

_GENERATION_AFTER = """
SELECT payload FROM om_events FINAL
WHERE resource_id = {resource:String} AND lookup_key = {key:String} AND type = 'status'
  AND (at, offset) > ({at:Int64}, {offset:UInt64})
ORDER BY at, offset LIMIT 1
"""

_LOGS = """
SELECT generation, active_observations FROM om_records FINAL
WHERE resource_id = {resource:String} AND lookup_key = {key:String} AND generation IN {generations:Array(UInt32)}
"""

_CALLS = """
SELECT cycle_id, model, attempts, input_tokens, cached_input_tokens, output_tokens, cost_usd FROM om_model_calls FINAL
WHERE resource_id = {resource:String} AND lookup_key = {key:String} AND cycle_id IN {cycles:Array(String)}
"""

_CALL_TOTALS = """
SELECT count(), sum(input_tokens), sum(cached_input_tokens), sum(output_tokens), sum(cost_usd),
       countIf(cost_usd IS NULL)
FROM om_model_calls FINAL WHERE resource_id = {resource:String} AND lookup_key = {key:String}
"""

_MARKER = """
SELECT
  (SELECT count() FROM om_events WHERE resource_id = {resource:String} AND lookup_key IN {keys:Array(String)}),
  (SELECT count() FROM om_records WHERE resource_id = {resource:String} AND lookup_key IN {keys:Array(String)}),
  (SELECT count() FROM om_model_calls WHERE resource_id = {resource:String} AND lookup_key IN {keys:Array(String)}),
  (SELECT count() FROM om_messages WHERE resource_id = {resource:String} AND thread_id IN {threads:Array(String)})
"""

_RESOURCE_MARKER = """
SELECT (SELECT count() FROM om_events WHERE resource_id = {resource:String}),
       (SELECT count() FROM om_records WHERE resource_id = {resource:String}),
       (SELECT count() FROM om_model_calls WHERE resource_id = {resource:String}),
       (SELECT count() FROM om_messages WHERE resource_id = {resource:String})
"""


@dataclass(frozen=True)
class ThreadRow:
    thread_id: str
    messages: int
    last_message_at: int


@dataclass(frozen=True)
class KeyHead:
    key: str
    generation: int
    threads: dict[str, ThreadMeta]
    observation_tokens: int


@dataclass(frozen=True)
class MessageRow:
    id: str
    role: str
    created_at: int
    text: str
    cycle_id: str
    """The cycle that observed it at or below the head's version; empty while unobserved."""


@dataclass(frozen=True)
class ChunkRow:
    chunk_id: str
    cycle_id: str
    observations: str
    token_count: int
    message_tokens: int
    message_ids: list[str]
    created_at: int


@dataclass(frozen=True)
class ModelCall:
    """A cycle's model calls, from the cost ledger."""

    cycle_id: str
    model: str
    attempts: int
    input_tokens: int
    cached_input_tokens: int  # of the input tokens, read from the provider's prompt cache
    output_tokens: int
    cost_usd: float | None


@dataclass(frozen=True)
class EventRow:
    event: LifecycleEvent
    offset: int


def threads(client: Client, resource: str, limit: int, offset: int) -> tuple[int, list[ThreadRow]]:
    rows = _rows(client, _THREADS, resource=resource, limit=limit, offset=offset)
    return (int(rows[0][3]) if rows else 0), [ThreadRow(t, int(n), int(last)) for t, n, last, _ in rows]


def heads(client: Client, resource: str) -> dict[str, KeyHead]:
    """The head of every key of the resource, by lookup key."""
    found = {}
    for key, generation, metas, tokens in _rows(client, _HEADS, resource=resource):
        parsed = {tid: ThreadMeta.model_validate(meta) for tid, meta in orjson.loads(metas).items()}
        found[key] = KeyHead(key, int(generation), parsed, int(tokens))
    return found


def statuses(client: Client, resource: str) -> dict[str, StatusEvent]:
    """The newest status event of every key of the resource, by lookup key."""
    found = {}
    for key, payload in _rows(client, _STATUSES, resource=resource):
        event = decode_event(payload)
        if isinstance(event, StatusEvent):
            found[key] = event
    return found


def messages(client: Client, resource: str, thread: str, key: str, version: int, *, which: MessageFilter = "all",
             cycle: str = "", limit: int, offset: int) -> tuple[int, list[MessageRow]]:
    """A page of the thread's messages, newest first, each with the cycle that observed it; and how
    many there are (0 when the page is past the end)."""
    params = {"resource": resource, "thread": thread, "key": key, "version": version, "cycle": cycle}
    sql = _MESSAGE_PAGE.format(cut=_CUT, condition=_MESSAGE_FILTERS[which])
    page = _rows(client, sql, **params, limit=limit, offset=offset)
    if not page:
        return 0, []
    ids = [row[0] for row in page]
    bodies = dict(_rows(client, _MESSAGE_BODIES, **params, ids=ids))
    marks = dict(_rows(client, _MESSAGE_MARKS, **params, ids=ids)) if which != "unobserved" else {}
    rows = [MessageRow(mid, role, int(at), _text(bodies[mid]), marks.get(mid, ""))
            for mid, role, at, _ in page if mid in bodies]
    return int(page[0][3]), rows


def buffered_chunks(client: Client, key: str, generation: int) -> list[ChunkRow]:
    rows = _rows(client, _CHUNKS, key=key, generation=generation)
    return [ChunkRow(c, cy, obs, int(t), int(mt), list(ids), int(at)) for c, cy, obs, t, mt, ids, at in rows]


def events(client: Client, resource: str, key: str, types: Sequence[str], limit: int, offset: int, *,
           cycle: str = "") -> tuple[int, list[EventRow]]:
    """A page of the key's events of these types (of one cycle, when named), newest first."""
    params = {"resource": resource, "key": key, "types": list(types), "cycle": cycle}
    rows = _rows(client, _EVENTS, **params, limit=limit, offset=offset)
    return (int(rows[0][2]) if rows else 0), [EventRow(decode_event(payload), int(off)) for payload, off, _ in rows]


def cycle_events(client: Client, resource: str, key: str, cycles: Sequence[str]) -> list[LifecycleEvent]:
    """Every event of these cycles (start, end, activation, failures), oldest first."""
    if not cycles:
        return []
    rows = _rows(client, _CYCLE_EVENTS, resource=resource, key=key, cycles=list(cycles))
    return [decode_event(payload) for (payload,) in rows]


def model_calls(client: Client, resource: str, key: str, cycles: Sequence[str]) -> dict[str, ModelCall]:
    """The ledger's row of each of these cycles, by cycle id (none for a cycle not yet answered)."""
    if not cycles:
        return {}
    rows = _rows(client, _CALLS, resource=resource, key=key, cycles=list(cycles))
    return {c: ModelCall(c, m, int(a), int(i), int(cached), int(o), None if cost is None else float(cost))
            for c, m, a, i, cached, o, cost in rows}


def call_totals(client: Client, resource: str, key: str) -> tuple[int, int, int, int, float | None, int]:
    """(calls, input tokens, of them cached, output tokens, cost of the priced ones or None, unpriced
    calls) of a key."""
    calls, i, cached, o, cost, unpriced = _rows(client, _CALL_TOTALS, resource=resource, key=key)[0]
    return int(calls), int(i), int(cached), int(o), None if cost is None else float(cost), int(unpriced)


def generation_after(client: Client, resource: str, key: str, at: int, offset: int) -> int | None:
    """The generation the first status event after ``(at, offset)`` reports."""
    rows = _rows(client, _GENERATION_AFTER, resource=resource, key=key, at=at, offset=offset)
    event = decode_event(rows[0][0]) if rows else None
    return event.generation if isinstance(event, StatusEvent) else None


def observation_logs(client: Client, resource: str, key: str, generations: Sequence[int]) -> dict[int, str]:
    """The last observation log of each generation (the record row each generation keeps)."""
    if not generations:
        return {}
    rows = _rows(client, _LOGS, resource=resource, key=key, generations=sorted(set(generations)))
    return {int(generation): text for generation, text in rows}


def marker(client: Client, resource: str, keys: Sequence[str] = (), threads: Sequence[str] = ()) -> str:
    """Changes whenever an event, a record snapshot, a ledger row or a message of these keys and
    threads (or of the whole resource) lands: the pages poll it and refresh only when it moves.
    (Chunks and observation marks land with snapshots of the same fold, so snapshots cover them.)"""
    if keys or threads:
        row = _rows(client, _MARKER, resource=resource, keys=list(keys), threads=list(threads))[0]
    else:
        row = _rows(client, _RESOURCE_MARKER, resource=resource)[0]
    return ":".join(str(int(n)) for n in row)


def _text(parts: str) -> str:
    """A message's readable text: its text parts, then a note per other part."""
    shown = []
    for part in orjson.loads(parts):
        kind = part.get("type")
        if kind == "text":
            shown.append(part.get("text", ""))
        elif kind:
            shown.append(f"[{kind}]")
    return "\n".join(shown)


def _rows(client: Client, sql: str, **parameters: Any) -> list[tuple[Any, ...]]:
    return client.query(sql, parameters=parameters).result_rows
