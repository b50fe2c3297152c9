"""Topic records to ClickHouse rows: one pure function per model, no IO.

Every row carries a version that only grows for its identity (a Kafka offset, or the key's
applied-event counter), so inserting a row again — a redelivery, a retry after a failed insert, a
full replay — leaves the ReplacingMergeTree tables as they were.

A message's row (one per resource, thread and id) has three sources, ranked by version:

* the messages topic, at ``2 × offset``: a later record of the id replaces an earlier one;
* the processor's refusal of that record (``MessageRefused``), at ``2 × offset + 1``: it replaces
  exactly that record's row with a hidden one (``refused = 1``), and a later valid record of the id
  is stored again;
* the processor's observed copy (``MessageInserted.observed``), at ``OBSERVED_VERSION`` + the key's
  version: once observed, the row is what the memory was built from, and no re-send replaces it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import orjson

from processors.redaction import Redactor
from schemas.deltas import (ChunkChanged, KeyDeleted, MessageInserted, MessageRefused, MessagesObserved,
                            RecordSnapshot, decode_delta)
from schemas.jobs import decode_result
from schemas.lifecycle import StatusEvent, decode_event
from schemas.messages import ChatMessage
from schemas.record import Scope
from streams.costs import call_cost
from streams.decoded import DECODED
from streams.stored_messages import stored_message

MESSAGE_COLUMNS = ("resource_id", "thread_id", "id", "lookup_key", "role", "created_at", "parts", "model",
                   "metadata", "message_resource_id", "version", "refused")
OBSERVED_VERSION = 1 << 63  # above 2 × any offset: an observed copy outranks every topic record
OBSERVATION_COLUMNS = ("lookup_key", "message_id", "cycle_id", "generation", "range", "observed_at", "version")
CHUNK_COLUMNS = ("lookup_key", "chunk_id", "cycle_id", "generation", "status", "observations", "token_count",
                 "message_ids", "message_tokens", "range", "last_observed_at", "created_at", "thread_title",
                 "extracted_values", "changed_at", "version")
RECORD_COLUMNS = ("resource_id", "lookup_key", "generation", "record_id", "scope", "thread_id", "origin_type",
                  "active_observations", "observation_token_count", "total_tokens_observed",
                  "pending_message_tokens", "last_observed_at", "buffered_chunk_ids", "buffered_reflection",
                  "buffered_reflection_tokens", "buffered_reflection_input_tokens", "observed_timezone",
                  "threads", "thread_titles", "unobserved_message_ids", "created_at", "updated_at",
                  "snapshot_at", "version")
EVENT_COLUMNS = ("resource_id", "lookup_key", "thread_id", "type", "cycle_id", "at", "event_id",
                 "applied_message_id", "payload", "offset")
TOMBSTONE_COLUMNS = ("resource_id", "lookup_key", "thread_id", "deleted_at", "version")
WORKING_MEMORY_COLUMNS = ("resource_id", "lookup_key", "wm_version", "content", "updated_at", "version")
MODEL_CALL_COLUMNS = ("resource_id", "lookup_key", "cycle_id", "role", "model", "mode", "ok", "attempts",
                      "input_tokens", "cached_input_tokens", "cache_write_input_tokens", "output_tokens", "cost_usd",
                      "started_at", "completed_at", "version")

# Insert order inside one flush: what a reader joins *from* lands last, so a reader that sees a
# record head also sees the observation rows it implies (see reader/queries.py).
TABLE_ORDER = ("om_messages", "om_message_observations", "om_observation_chunks", "om_events",
               "om_deleted_keys", "om_working_memory", "om_model_calls", "om_records")
COLUMNS = {
    "om_messages": MESSAGE_COLUMNS,
    "om_message_observations": OBSERVATION_COLUMNS,
    "om_observation_chunks": CHUNK_COLUMNS,
    "om_records": RECORD_COLUMNS,
    "om_events": EVENT_COLUMNS,
    "om_deleted_keys": TOMBSTONE_COLUMNS,
    "om_working_memory": WORKING_MEMORY_COLUMNS,
    "om_model_calls": MODEL_CALL_COLUMNS,
}


@dataclass(frozen=True)
class Rows:
    """What one topic record turns into: rows per table, and a deletion to run after them."""

    rows: dict[str, list[list[Any]]]
    deletion: KeyDeleted | None = None


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()


def _nullable_json(value: Any) -> str | None:
    return None if value is None else _json(value)


def message_rows(key: bytes | None, value: bytes | None, offset: int, redactor: Redactor | None = None,
                 scope: Scope = "thread") -> Rows:
    """A chat message's row; :class:`~streams.stored_messages.NotMaterialised` for one the processor
    refuses by its record alone (undecodable, invalid, or not keyed by its lookup key under ``scope``)."""
    message = stored_message(key, value, scope)
    key_text = key.decode() if isinstance(key, bytes) else key or ""
    return Rows({"om_messages": [_message_row(message, key_text, 2 * offset, redactor)]})


def _message_row(message: ChatMessage, key: str, version: int, redactor: Redactor | None) -> list[Any]:
    if redactor is not None:
        message = redactor.message(message)
    dumped = message.to_json_dict()
    return [message.owner, message.thread_id, message.id, key, message.role, message.created_at,
            _json(dumped.get("parts", [])), message.model, _nullable_json(message.metadata),
            message.resource_id, version, 0]


def _refused_row(delta: MessageRefused, redactor: Redactor | None) -> list[Any]:
    """The row that replaces the refused record's: the message the core holds, or a hidden one."""
    if delta.held is not None:
        return _message_row(delta.held, delta.key, 2 * delta.version + 1, redactor)
    return [delta.owner, delta.thread_id, delta.message_id, delta.key, "user", 0, "[]", None, None, None,
            2 * delta.version + 1, 1]


def event_rows(key: str, value: bytes, offset: int) -> Rows:
    event = DECODED.take("event", value)  # the fold's own, encoded to exactly these bytes
    if event is None:
        event = decode_event(value)
        payload = event.to_bytes()
    else:
        payload = value
    applied = ""
    if isinstance(event, StatusEvent) and event.applied_through is not None:
        applied = event.applied_through.message_id
    event_id = int.from_bytes(hashlib.blake2b(payload, digest_size=8).digest(), "big")
    row = [event.resource_id, event.key, event.thread_id or "", event.type, vars(event).get("cycle_id", ""),
           event.at, event_id, applied, payload.decode(), offset]
    return Rows({"om_events": [row]})


def result_rows(value: bytes, offset: int) -> Rows:
    """A cycle's model calls for the cost ledger: billed tokens (the cached input ones apart), and
    their cost where litellm's offline map prices the model. Results of older workers name no
    resource: the key's id stands in for a resource key, and the ledger's empty resource for a
    thread key; nor cached or cache-written tokens: 0."""
    result = decode_result(value)
    kind, _, owner = result.key.partition(":")
    resource = result.resource_id or (owner if kind == "resource" else "")
    usage = result.usage
    row = [resource, result.key, result.cycle_id, "observer" if result.kind == "observe-result" else "reflector",
           result.model or "", result.mode, int(result.ok), result.attempts, usage.input_tokens,
           usage.cached_input_tokens, usage.cache_write_input_tokens, usage.output_tokens,
           call_cost(result.model, usage.input_tokens, usage.output_tokens, usage.cached_input_tokens,
                     usage.cache_write_input_tokens),
           result.started_at, result.completed_at, offset]
    return Rows({"om_model_calls": [row]})


def delta_rows(value: bytes, redactor: Redactor | None = None) -> Rows:
    delta = DECODED.take("delta", value)  # the fold's own, encoded to exactly these bytes
    if delta is None:
        delta = decode_delta(value)
    if isinstance(delta, RecordSnapshot):
        rows = {"om_records": [_record_row(delta)]}
        record = delta.record
        if record.working_memory is not None:
            rows["om_working_memory"] = [[record.resource_id, record.key, record.working_memory_version,
                                          record.working_memory, delta.at, delta.version]]
        return Rows(rows)
    if isinstance(delta, MessagesObserved):
        rows = [[delta.key, mid, delta.cycle_id, delta.generation, delta.range, delta.at, delta.version]
                for mid in delta.message_ids]
        return Rows({"om_message_observations": rows})
    if isinstance(delta, ChunkChanged):
        return Rows({"om_observation_chunks": [_chunk_row(delta)]})
    if isinstance(delta, MessageInserted):
        version = OBSERVED_VERSION + delta.version if delta.observed else delta.version
        return Rows({"om_messages": [_message_row(delta.message, delta.key, version, redactor)]})
    if isinstance(delta, MessageRefused):
        return Rows({"om_messages": [_refused_row(delta, redactor)]})
    assert isinstance(delta, KeyDeleted)
    tombstone = [delta.resource_id, delta.key, delta.thread_id or "", delta.at, delta.version]
    return Rows({"om_deleted_keys": [tombstone]}, deletion=delta)


def _record_row(snapshot: RecordSnapshot) -> list[Any]:
    record = snapshot.record
    threads = {tid: meta.to_json_dict() for tid, meta in snapshot.threads.items()}
    titles = {tid: meta.thread_title for tid, meta in snapshot.threads.items() if meta.thread_title}
    return [record.resource_id, snapshot.key, record.generation, record.id, record.scope, record.thread_id,
            record.origin_type, record.active_observations, record.observation_token_count,
            record.total_tokens_observed, snapshot.pending_message_tokens, record.last_observed_at,
            [c.id for c in record.buffered_chunks], record.buffered_reflection,
            record.buffered_reflection_tokens, record.buffered_reflection_input_tokens,
            record.observed_timezone, _json(threads), titles, list(snapshot.unobserved_message_ids),
            record.created_at, record.updated_at, snapshot.at, snapshot.version]


def _chunk_row(delta: ChunkChanged) -> list[Any]:
    chunk = delta.chunk
    ids = list(chunk.message_ids)
    span = f"{ids[0]}:{ids[-1]}" if ids else ""
    return [delta.key, chunk.id, chunk.cycle_id, delta.generation, delta.status, chunk.observations,
            chunk.token_count, ids, chunk.message_tokens, span, chunk.last_observed_at, chunk.created_at,
            chunk.thread_title, _nullable_json(chunk.extracted_values), delta.at, delta.version]
