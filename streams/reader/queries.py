"""The SQL behind a context, one function per question, each asked for many keys at once; synchronous.

Two askers: the sink, which after each batch assembles every touched key's context row from the
tables it wrote (heads, unobserved windows, working memory, statuses; :mod:`streams.sink.contexts`),
and the reader, which answers ``context()``/``status()`` from those rows in one primary-key query
(:func:`context_rows`) and waits for read-your-writes with :func:`awaited`. Every function takes a
batch of requests and returns one answer per request, in order: the query itself, not its size, is
what costs (a few ms each on the embedded engine, which runs one at a time). A lone call is a batch
of one.

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

from streams.reader.context_row import ContextRow, decode_context_row, head_fields

ResourceKey = tuple[str, str]
"""``(resource_id, lookup_key)``."""

_PAIRS = "Array(Tuple(String, String))"
_TRIPLES = "Array(Tuple(String, String, String))"

_HEADS = f"""
SELECT resource_id, lookup_key, generation, version, active_observations, observed_timezone, threads,
       last_observed_at
FROM om_records FINAL
WHERE (resource_id, lookup_key) IN {{keys:{_PAIRS}}}
ORDER BY resource_id, lookup_key, generation DESC
LIMIT 1 BY resource_id, lookup_key
"""

_MESSAGE_THREADS = f"""
SELECT resource_id, thread_id, max(role != 'system') FROM om_messages FINAL
WHERE ((resource_id, thread_id) IN {{threads:{_PAIRS}}} OR resource_id IN {{resources:Array(String)}}) AND refused = 0
GROUP BY resource_id, thread_id
ORDER BY resource_id, thread_id
"""

_LATEST_STATUSES = f"""
SELECT resource_id, lookup_key, at, offset, payload FROM om_events FINAL
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
WHERE (resource_id, thread_id) IN {{threads:{_PAIRS}}} AND role != 'system' AND refused = 0
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

# A wait's two questions about each awaited message, in one query: is the processor's fold of it
# stored (a status event naming it), and at which version, if any, did an observation cover it.
# Both by primary-key prefix; whether the key's context row covers the message is the reader's check.
_AWAITED = f"""
SELECT 'folded', resource_id, lookup_key, applied_message_id, toUInt64(0) FROM om_events
WHERE (resource_id, lookup_key, applied_message_id) IN {{awaited:{_TRIPLES}}} AND type = 'status'
UNION ALL
SELECT 'observed', '', lookup_key, message_id, version FROM om_message_observations FINAL
WHERE (lookup_key, message_id) IN {{observed:{_PAIRS}}}
"""

# Every message id each key's stored status events applied (streams/reader/fold_memory.py loads a
# key once): one primary-key range per key.
_APPLIED = f"""
SELECT DISTINCT resource_id, lookup_key, applied_message_id FROM om_events
WHERE (resource_id, lookup_key) IN {{keys:{_PAIRS}}} AND type = 'status' AND applied_message_id != ''
"""

# Every resource's row of each key, newest version: one primary-key range per key.
_CONTEXT_ROWS = """
SELECT lookup_key, resource_id, head, working_memory, status, status_at, status_offset, windows, message_threads,
       speaking_threads, version
FROM om_contexts FINAL
WHERE lookup_key IN {keys:Array(String)}
"""

# The same rows by (resource, key), as stored: the sink updates a row in place when only its status changed.
_STORED_CONTEXT_ROWS = f"""
SELECT lookup_key, resource_id, head, working_memory, status, status_at, status_offset, windows, message_threads,
       speaking_threads, version
FROM om_contexts FINAL
WHERE (lookup_key, resource_id) IN {{keys:{_PAIRS}}}
"""


@dataclass(frozen=True)
class WindowRequest:
    """Whose unobserved messages, relative to which head version."""

    resource_id: str
    thread_id: str
    key: str
    version: int


@dataclass(frozen=True)
class AwaitedMessage:
    """A message a caller waits to see folded and in its key's context row (read-your-writes)."""

    resource_id: str
    thread_id: str
    key: str
    message_id: str


def head_rows(client: Client, keys: Sequence[ResourceKey]) -> list[dict[str, Any] | None]:
    """The head generation of each ``(resource, key)`` as JSON-ready fields, None before the key's
    first snapshot (:func:`streams.reader.context_row.head_of` decodes it)."""
    found = {(row[0], row[1]): head_fields(*row[2:]) for row in _rows(client, _HEADS, keys=_unique(keys))}
    return [found.get(key) for key in keys]


def message_threads(client: Client, keys: Sequence[ResourceKey]) -> list[dict[str, bool]]:
    """Each key's threads the resource has messages in (thread scope: the key's one thread;
    resource scope: all the resource's threads), each with whether a non-system message is among them."""
    threads = [(resource, key.split(":", 1)[1]) for resource, key in keys if key.startswith("thread:")]
    resources = [resource for resource, key in keys if not key.startswith("thread:")]
    found: dict[str, dict[str, bool]] = {}
    for resource, thread, speaks in _rows(client, _MESSAGE_THREADS, threads=_unique(threads),
                                          resources=_unique(resources)):
        found.setdefault(resource, {})[thread] = bool(speaks)
    answers = []
    for resource, key in keys:
        mine = found.get(resource, {})
        if key.startswith("thread:"):
            thread = key.split(":", 1)[1]
            mine = {thread: mine[thread]} if thread in mine else {}
        answers.append(dict(mine))
    return answers


def unobserved_rows(client: Client, requests: Sequence[WindowRequest]) -> list[list[dict[str, Any]]]:
    """Each thread's messages no observation at or below its head version covers, and no deletion
    of its key hides, oldest first, as :class:`ChatMessage` fields (``ChatMessage.model_validate``)."""
    windows: dict[WindowRequest, list[dict[str, Any]]] = {}
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
                windows[request].append(_message_fields(thread_id, row))
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


def latest_status_rows(client: Client, keys: Sequence[ResourceKey]) -> list[tuple[int, int, str] | None]:
    """Each key's newest stored status event as ``(at, offset, payload)``."""
    found = {(resource, key): (at, offset, payload)
             for resource, key, at, offset, payload in _rows(client, _LATEST_STATUSES, keys=_unique(keys))}
    return [found.get(key) for key in keys]


# Each lookup key that has a context row, as the first 8 bytes of its MD5 read little-endian
# (streams/reader/context_cache.py ``key_hash``): 8 bytes a key, whatever the keys' length.
_CONTEXT_KEY_HASHES = """
SELECT DISTINCT reinterpretAsUInt64(substring(MD5(lookup_key), 1, 8)) FROM om_contexts
"""


def context_key_hashes(client: Client) -> list[int]:
    """The hashes of every lookup key with a context row (``key_hash``), in no order."""
    columns = client.query(_CONTEXT_KEY_HASHES).result_columns
    return [int(value) for value in columns[0]] if columns else []


def context_rows(client: Client, keys: Sequence[str]) -> list[dict[str, ContextRow]]:
    """Every resource's context row of each lookup key, by resource id (one primary-key query)."""
    found: dict[str, dict[str, ContextRow]] = {}
    for row in _rows(client, _CONTEXT_ROWS, keys=_unique(keys)):
        decoded = decode_context_row(row)
        found.setdefault(decoded.key, {})[decoded.resource_id] = decoded
    return [dict(found.get(key, {})) for key in keys]


def stored_context_rows(client: Client, keys: Sequence[ResourceKey]) -> list[list[Any] | None]:
    """Each ``(resource, key)``'s stored row, undecoded (``CONTEXT_COLUMNS`` of the sink), or None."""
    found = {(row[1], row[0]): list(row) for row in _rows(client, _STORED_CONTEXT_ROWS,
                                                          keys=_unique((key, resource) for resource, key in keys))}
    return [found.get(key) for key in keys]


def awaited(client: Client, messages: Sequence[AwaitedMessage]) -> list[tuple[bool, int | None]]:
    """Per message: whether the processor's fold of it is stored, and the version of the
    observation covering it (None while none does)."""
    rows = _rows(client, _AWAITED, awaited=_unique((a.resource_id, a.key, a.message_id) for a in messages),
                 observed=_unique((a.key, a.message_id) for a in messages))
    folded = {(resource, key, mid) for tag, resource, key, mid, _ in rows if tag == "folded"}
    observed = {(key, mid): int(version) for tag, _, key, mid, version in rows if tag == "observed"}
    return [((a.resource_id, a.key, a.message_id) in folded, observed.get((a.key, a.message_id))) for a in messages]


def applied_ids(client: Client, keys: Sequence[ResourceKey]) -> list[frozenset[str]]:
    """Per (resource, key): every message id one of its stored status events applied."""
    found: dict[ResourceKey, set[str]] = {}
    for resource, key, message_id in _rows(client, _APPLIED, keys=_unique(keys)):
        found.setdefault((resource, key), set()).add(message_id)
    return [frozenset(found.get(key, ())) for key in keys]


def _rows(client: Client, sql: str, **parameters: Any) -> list[tuple[Any, ...]]:
    return client.query(sql, parameters=parameters).result_rows


def _unique(items: Any) -> list[Any]:
    """The distinct items in first-seen order (a batch may hold one key for several callers)."""
    return list(dict.fromkeys(items))


def _message_fields(thread_id: str, row: Sequence[Any]) -> dict[str, Any]:
    mid, role, created_at, parts, model, metadata, resource = row
    return {
        "id": mid, "thread_id": thread_id, "resource_id": resource, "role": role, "created_at": created_at,
        "parts": orjson.loads(parts), "model": model,
        "metadata": orjson.loads(metadata) if metadata is not None else None,
    }
