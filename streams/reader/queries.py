"""The reader's SQL, one function per question, each asked for many callers at once; synchronous.

Every function takes a batch of requests and returns one answer per request, in order: concurrent
readers are coalesced (:mod:`streams.reader.coalesce`) into one query per table, since the query
itself, not its size, is what costs (a few ms each on the embedded engine, which runs one at a
time). A lone call is a batch of one.

Rules this file keeps:

* Every query names ``resource_id`` or reaches its rows through a key that a resource-bound query
  returned first; a caller's ids are only ever bound as server-side ``{name:Type}`` parameters.
  Rows come back tagged with the ids they were selected by, and are handed only to the requests
  carrying exactly those ids, so a batch never mixes one caller's rows into another's answer.
* Consistency: the unobserved messages are taken relative to the head record's version (only
  observation rows at or below it count), and the sink inserts observation rows before records.
  So a reader never sees a message leave the window before the observations that cover it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from clickhouse_connect.driver.client import Client

from schemas.lifecycle import StatusEvent, decode_event
from schemas.messages import ChatMessage
from schemas.record import ThreadMeta

ResourceKey = tuple[str, str]
"""``(resource_id, lookup_key)``."""
ResourceThread = tuple[str, str]
"""``(resource_id, thread_id)``."""

_PAIRS = "Array(Tuple(String, String))"

_HEADS = f"""
SELECT resource_id, lookup_key, generation, version, active_observations, observed_timezone, threads,
       last_observed_at
FROM om_records FINAL
WHERE (resource_id, lookup_key) IN {{keys:{_PAIRS}}}
ORDER BY resource_id, lookup_key, generation DESC
LIMIT 1 BY resource_id, lookup_key
"""

_OWNERS = """
SELECT DISTINCT lookup_key, resource_id FROM om_records
WHERE lookup_key IN {keys:Array(String)}
"""

_THREADS_WITH_MESSAGES = f"""
SELECT DISTINCT resource_id, thread_id FROM om_messages
WHERE (resource_id, thread_id) IN {{threads:{_PAIRS}}}
"""

_RESOURCE_THREADS = """
SELECT DISTINCT resource_id, thread_id FROM om_messages
WHERE resource_id IN {resources:Array(String)} AND role != 'system'
ORDER BY resource_id, thread_id
"""

_LATEST_STATUSES = f"""
SELECT resource_id, lookup_key, payload FROM om_events FINAL
WHERE (resource_id, lookup_key) IN {{keys:{_PAIRS}}} AND type = 'status'
ORDER BY at DESC, offset DESC
LIMIT 1 BY resource_id, lookup_key
"""

# No FINAL: a block's content never changes for its wm_version, but a later snapshot may rewrite
# the row with a newer key version, and FINAL would then hide it from a reader at an older head.
_WORKING_MEMORIES = f"""
SELECT resource_id, lookup_key, content FROM om_working_memory
WHERE (resource_id, lookup_key) IN {{pairs:{_PAIRS}}}
  AND version <= transform(lookup_key, {{keys:Array(String)}}, {{versions:Array(UInt64)}}, toUInt64(0))
ORDER BY wm_version DESC
LIMIT 1 BY resource_id, lookup_key
"""

def _unobserved_sql(match: str, observed: str) -> str:
    """The unobserved-messages query of a round in which a thread id names one request and a key one
    resource and head version (arrays are aligned by request); a row is observed when ``match`` is
    among the ``observed`` columns of the key's observation rows at or below its head version."""
    return f"""
WITH {{thread_ids:Array(String)}} AS thread_ids, {{keys:Array(String)}} AS keys
SELECT thread_id, id, role, created_at, parts, model, metadata, message_resource_id
FROM om_messages FINAL
WHERE (resource_id, thread_id) IN {{threads:{_PAIRS}}} AND role != 'system'
  AND {match} NOT IN (
    SELECT {observed} FROM om_message_observations FINAL
    WHERE lookup_key IN keys AND version <= transform(lookup_key, keys, {{versions:Array(UInt64)}}, toUInt64(0)))
ORDER BY thread_id, created_at, version
"""


# A round of one key (every lone call) matches by message id alone: a set of strings costs a
# fraction of a set of (key, id) pairs to build and probe, and that is most of this query's time.
_UNOBSERVED_ONE_KEY = _unobserved_sql("id", "message_id")
_UNOBSERVED = _unobserved_sql("(transform(thread_id, thread_ids, keys, ''), id)", "lookup_key, message_id")

# Each key's tombstones; the newest, max(deleted_at), is what FINAL would keep (deleted_at being
# the table's version column). Asked apart from the messages, and only when there are messages to
# cut: folded into the messages query as a scalar subquery it cost more than this query's own
# round trip. Asked after them, so a tombstone that lands in between hides what it deletes.
_DELETION_CUTS = f"""
SELECT resource_id, lookup_key, deleted_at FROM om_deleted_keys
WHERE (resource_id, lookup_key) IN {{keys:{_PAIRS}}}
"""

_CAUGHT_UP = """
SELECT 'folded', resource_id, lookup_key, applied_message_id FROM om_events
WHERE (resource_id, lookup_key, applied_message_id) IN {folded:Array(Tuple(String, String, String))}
  AND type = 'status'
UNION ALL
SELECT 'stored', resource_id, thread_id, id FROM om_messages
WHERE (resource_id, thread_id, id) IN {stored:Array(Tuple(String, String, String))}
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
    last_observed_at: int | None = None


@dataclass(frozen=True)
class WindowRequest:
    """Whose unobserved messages, relative to which head version."""

    resource_id: str
    thread_id: str
    key: str
    version: int


@dataclass(frozen=True)
class AwaitedMessage:
    """A message a caller waits to see stored and folded (read-your-writes)."""

    resource_id: str
    thread_id: str
    key: str
    message_id: str


def heads(client: Client, keys: Sequence[ResourceKey]) -> list[Head | None]:
    """The head generation of each ``(resource, key)``, None before the key's first snapshot."""
    found = {(row[0], row[1]): _head(row[1:]) for row in _rows(client, _HEADS, keys=_unique(keys))}
    return [found.get(key) for key in keys]


def owned_elsewhere(client: Client, keys: Sequence[ResourceKey]) -> list[bool]:
    """Whether another resource owns each key (a thread id belongs to one resource for life)."""
    owners: dict[str, set[str]] = {}
    for key, resource in _rows(client, _OWNERS, keys=_unique(key for _, key in keys)):
        owners.setdefault(key, set()).add(resource)
    return [bool(owners.get(key, set()) - {resource}) for resource, key in keys]


def threads_with_messages(client: Client, threads: Sequence[ResourceThread]) -> list[bool]:
    found = {tuple(row) for row in _rows(client, _THREADS_WITH_MESSAGES, threads=_unique(threads))}
    return [thread in found for thread in threads]


def resource_threads(client: Client, resources: Sequence[str]) -> list[list[str]]:
    """Every thread with messages under each resource (resource scope: one record, many threads)."""
    found: dict[str, list[str]] = {}
    for resource, thread in _rows(client, _RESOURCE_THREADS, resources=_unique(resources)):
        found.setdefault(resource, []).append(thread)
    return [list(found.get(resource, [])) for resource in resources]


def unobserved_messages(client: Client, requests: Sequence[WindowRequest]) -> list[list[ChatMessage]]:
    """Each thread's messages no observation at or below its head version covers, and no deletion
    of its key hides, oldest first."""
    windows: dict[WindowRequest, list[ChatMessage]] = {}
    for round_ in _rounds(requests):
        by_thread = {r.thread_id: r for r in round_}
        keys = [r.key for r in round_]
        params = {"thread_ids": list(by_thread), "keys": keys, "versions": [r.version for r in round_],
                  "threads": [(r.resource_id, r.thread_id) for r in round_]}
        rows = _rows(client, _UNOBSERVED_ONE_KEY if len(set(keys)) == 1 else _UNOBSERVED, **params)
        cuts = _deletion_cuts(client, _unique((r.resource_id, r.key) for r in round_)) if rows else {}
        windows.update((r, []) for r in round_)
        for thread_id, *row in rows:
            request = by_thread[thread_id]
            created_at = row[2]
            if created_at > cuts.get((request.resource_id, request.key), -1):
                windows[request].append(_message(thread_id, row))
    return [list(windows[r]) for r in requests]


def _deletion_cuts(client: Client, keys: Sequence[ResourceKey]) -> dict[ResourceKey, int]:
    """Each deleted key's cut-off: its messages created at or before it are gone."""
    cuts: dict[ResourceKey, int] = {}
    for resource, key, deleted_at in _rows(client, _DELETION_CUTS, keys=keys):
        cuts[resource, key] = max(deleted_at, cuts.get((resource, key), deleted_at))
    return cuts


def _rounds(requests: Sequence[WindowRequest]) -> list[list[WindowRequest]]:
    """Distinct requests in rounds where a thread id names one request and a key one (resource, version).

    Almost every batch is one round; two callers reading one thread at different head versions,
    or one thread id under two resources, take one more.
    """
    rounds: list[tuple[list[WindowRequest], set[str], dict[str, tuple[str, int]]]] = []
    for request in _unique(requests):
        bound = (request.resource_id, request.version)
        for members, threads, keys in rounds:
            if request.thread_id not in threads and keys.get(request.key, bound) == bound:
                break
        else:
            members, threads, keys = [], set(), {}
            rounds.append((members, threads, keys))
        members.append(request)
        threads.add(request.thread_id)
        keys[request.key] = bound
    return [members for members, _, _ in rounds]


def working_memories(client: Client, requests: Sequence[WindowRequest]) -> list[str | None]:
    """Each key's newest working memory at or below its head version: the block shown must belong
    to the same record state as the observations shown with it, however the sink's inserts race."""
    found: dict[WindowRequest, str | None] = {}
    for round_ in _rounds(requests):
        params = {"keys": [r.key for r in round_], "versions": [r.version for r in round_],
                  "pairs": _unique((r.resource_id, r.key) for r in round_)}
        rows = {(resource, key): content for resource, key, content in _rows(client, _WORKING_MEMORIES, **params)}
        found.update((r, rows.get((r.resource_id, r.key))) for r in round_)
    return [found[r] for r in requests]


def latest_statuses(client: Client, keys: Sequence[ResourceKey]) -> list[StatusEvent | None]:
    found = {(resource, key): payload for resource, key, payload in _rows(client, _LATEST_STATUSES, keys=_unique(keys))}
    return [_status(found[key]) if key in found else None for key in keys]


def caught_up(client: Client, awaited: Sequence[AwaitedMessage]) -> list[bool]:
    """Whether each message is stored and the processor's fold of it is materialised."""
    params = {"folded": _unique((a.resource_id, a.key, a.message_id) for a in awaited),
              "stored": _unique((a.resource_id, a.thread_id, a.message_id) for a in awaited)}
    seen = {tuple(row) for row in _rows(client, _CAUGHT_UP, **params)}
    return [("folded", a.resource_id, a.key, a.message_id) in seen and ("stored", a.resource_id, a.thread_id, a.message_id) in seen
            for a in awaited]


def _rows(client: Client, sql: str, **parameters: Any) -> list[tuple[Any, ...]]:
    return client.query(sql, parameters=parameters).result_rows


def _unique(items: Any) -> list[Any]:
    """The distinct items in first-seen order (a batch may hold one key for several callers)."""
    return list(dict.fromkeys(items))


def _head(row: Sequence[Any]) -> Head:
    key, generation, version, observations, timezone, threads, last_observed_at = row
    metas = {tid: ThreadMeta.model_validate(meta) for tid, meta in orjson.loads(threads).items()}
    cursor = int(last_observed_at) if last_observed_at is not None else None
    return Head(key, int(generation), int(version), observations, timezone, metas, cursor)


def _status(payload: str) -> StatusEvent:
    event = decode_event(payload)
    assert isinstance(event, StatusEvent)
    return event


def _message(thread_id: str, row: Sequence[Any]) -> ChatMessage:
    mid, role, created_at, parts, model, metadata, resource = row
    return ChatMessage.model_validate({
        "id": mid, "thread_id": thread_id, "resource_id": resource, "role": role, "created_at": created_at,
        "parts": orjson.loads(parts), "model": model,
        "metadata": orjson.loads(metadata) if metadata is not None else None,
    })
