"""Context rows of keys a batch only added messages to: the stored row plus the new messages.

Most batches of a live conversation add a message or two to a key and nothing else (the processor's
answer, a status event, comes in the next batch). Recomputing such a key's row from the tables runs
five queries (:func:`streams.sink.contexts.context_rows`); this takes the stored row and appends the
batch's messages to its window, after one primary-key query for all such keys and one for their
stored rows (none when the sink remembers them: streams/sink/row_cache.py). Rules this file keeps:

* **The same row a recompute would write, or none.** A key is appended to only when the tables show
  that a recompute could not differ: each of its batch messages is new (no other version of it
  is stored than the batch's own), not refused, not observed (no observation row names it), the
  key has no deletion cut, it has a stored row, and no message already in the window shares a
  new one's time (order between them would need the stored versions). Any doubt sends the key to
  the full recompute, which stays the definition (the fuzz equality test in
  ``tests/integration/test_context_rows.py`` drives both paths).
* A message joins its thread's window (non-system) and the key's thread lists exactly as the
  recompute's queries count it: ``message_threads`` any message, ``speaking_threads`` a non-system one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import orjson
from clickhouse_connect.driver.client import Client

from streams.reader.queries import ResourceKey
from streams.sink.rows import MESSAGE_COLUMNS

_RESOURCE, _THREAD, _ID, _KEY, _ROLE, _CREATED, _PARTS, _MODEL, _METADATA, _MESSAGE_RESOURCE, _VERSION, _REFUSED = (
    MESSAGE_COLUMNS.index(c) for c in MESSAGE_COLUMNS)
# row indices of a stored om_contexts row (streams.sink.contexts.CONTEXT_COLUMNS)
_WINDOWS, _MESSAGE_THREADS, _SPEAKING = 7, 8, 9

_DOUBTS = """
SELECT 'versions', resource_id, thread_id, id, groupUniqArray(version) FROM om_messages
WHERE (resource_id, thread_id, id) IN {messages:Array(Tuple(String, String, String))}
GROUP BY resource_id, thread_id, id
UNION ALL
SELECT 'observed', '', lookup_key, message_id, [] FROM om_message_observations
WHERE (lookup_key, message_id) IN {observed:Array(Tuple(String, String))}
UNION ALL
SELECT 'deleted', resource_id, lookup_key, '', [] FROM om_deleted_keys
WHERE (resource_id, lookup_key) IN {keys:Array(Tuple(String, String))}
"""


def appended_rows(client: Client, keys: Sequence[ResourceKey], messages: Iterable[Sequence[Any]],
                  stored_rows: Callable[[Sequence[ResourceKey]], list[list[Any] | None]]
                  ) -> tuple[list[list[Any]], list[ResourceKey]]:
    """The rows of ``keys`` with the batch's ``messages`` (``om_messages`` rows) appended, without a
    new version or status yet; and the keys that need a full recompute instead. ``stored_rows``
    gives the keys' stored rows (streams.sink.contexts: remembered, else one query)."""
    if not keys:
        return [], []
    wanted = set(keys)
    newest: dict[tuple[str, str, str], Sequence[Any]] = {}
    batch_versions: dict[tuple[str, str, str], set[int]] = {}
    for row in messages:
        if (row[_RESOURCE], row[_KEY]) in wanted:
            ident = (row[_RESOURCE], row[_THREAD], row[_ID])
            batch_versions.setdefault(ident, set()).add(row[_VERSION])
            if ident not in newest or row[_VERSION] > newest[ident][_VERSION]:
                newest[ident] = row
    doubtful = _doubtful(client, keys, newest, batch_versions)
    kept = [k for k in keys if k not in doubtful]
    stored = stored_rows(kept)
    by_key: dict[ResourceKey, list[Sequence[Any]]] = {}
    for row in newest.values():
        by_key.setdefault((row[_RESOURCE], row[_KEY]), []).append(row)
    rows, full = [], list(doubtful)
    for key, row in zip(kept, stored, strict=True):
        appended = _append(row, by_key.get(key, [])) if row is not None else None
        if appended is None:
            full.append(key)
        else:
            rows.append(appended)
    return rows, sorted(full)


def _doubtful(client: Client, keys: Sequence[ResourceKey], newest: dict[tuple[str, str, str], Sequence[Any]],
              batch_versions: dict[tuple[str, str, str], set[int]]) -> set[ResourceKey]:
    """The keys whose messages are not plainly new, or that have a deletion cut (one query)."""
    doubtful = {(row[_RESOURCE], row[_KEY]) for row in newest.values() if row[_REFUSED]}
    found = client.query(_DOUBTS, parameters={
        "messages": list(newest), "observed": sorted({(row[_KEY], row[_ID]) for row in newest.values()}),
        "keys": sorted(keys)}).result_rows
    for tag, resource, second, third, versions in found:
        if tag == "versions" and not set(versions) <= batch_versions[resource, second, third]:
            row = newest[resource, second, third]
            doubtful.add((row[_RESOURCE], row[_KEY]))
        elif tag == "observed":
            doubtful.update((row[_RESOURCE], row[_KEY]) for row in newest.values()
                            if row[_KEY] == second and row[_ID] == third)
        elif tag == "deleted":
            doubtful.add((resource, second))
    return doubtful


def _append(stored: list[Any], messages: list[Sequence[Any]]) -> list[Any] | None:
    """The stored row with ``messages`` in its windows and thread lists, or None if the order of a
    new message among the window's is not certain (a shared time). Linear in window and batch."""
    windows: dict[str, list[dict[str, Any]]] = orjson.loads(stored[_WINDOWS])
    threads, speaking = set(stored[_MESSAGE_THREADS]), set(stored[_SPEAKING])
    new_ids = {(row[_THREAD], row[_ID]) for row in messages}
    by_thread: dict[str, list[Sequence[Any]]] = {}
    for row in messages:
        threads.add(row[_THREAD])
        if row[_ROLE] != "system":
            by_thread.setdefault(row[_THREAD], []).append(row)
    for thread, rows in by_thread.items():
        speaking.add(thread)
        kept = [m for m in windows.get(thread, []) if (thread, m["id"]) not in new_ids]  # a redelivered one: re-added
        times = {m["created_at"] for m in kept}
        if any(row[_CREATED] in times for row in rows):
            return None
        added = [_message_fields(row) for row in sorted(rows, key=lambda r: (r[_CREATED], r[_VERSION]))]
        windows[thread] = sorted(kept + added, key=lambda m: m["created_at"])  # stable: equal-time new ones by version
    updated = list(stored)
    updated[_WINDOWS] = orjson.dumps({thread: windows[thread] for thread in sorted(windows)}).decode()
    updated[_MESSAGE_THREADS], updated[_SPEAKING] = sorted(threads), sorted(speaking)
    return updated


def _message_fields(row: Sequence[Any]) -> dict[str, Any]:
    """As :func:`streams.reader.queries.unobserved_rows` reads the stored row back."""
    return {"id": row[_ID], "thread_id": row[_THREAD], "resource_id": row[_MESSAGE_RESOURCE], "role": row[_ROLE],
            "created_at": row[_CREATED], "parts": orjson.loads(row[_PARTS]), "model": row[_MODEL],
            "metadata": orjson.loads(row[_METADATA]) if row[_METADATA] is not None else None}
