"""Applying a ``record-import`` (schemas.record_import): a key starts from Mastra's memory (issue 22).

Rules this module keeps:

* An import seeds a key that has no memory yet. Part 0 sets the record — observations, generation,
  cursor, buffered chunks and reflection, token counts, per-thread hints and titles, working memory —
  and emits the earlier generations as history snapshots. A key that already holds memory (messages,
  observations or another import) refuses it: merging two memories is not something to guess.
* The same import again (a replay, ``om replay --restart``) changes nothing: part 0 is recognised by
  its ``import_id`` and every message by its id, as for any repeated message.
* Messages Mastra had observed are remembered as observed (a later copy is a counted duplicate),
  materialised for recall as observed copies (``MessageInserted.observed``) with an observation row
  (``MessagesObserved``), never put in the window; the others enter the window as a message does
  (``intake.take_message``). No cycle is planned here: the import issues no Observer or Reflector
  job, and the next message continues from Mastra's state (its persisted pending-token count sizes
  the next activation, as ``step_pending_tokens`` does for our own steps).
"""

from __future__ import annotations

from processors.machine.generation import record_id
from processors.machine.intake import Rejected, take_message
from processors.machine.state import LATE_TOLERANCE_MS
from processors.machine.step import Step
from processors.machine.observation_groups import message_range
from schemas.deltas import MessagesObserved, RecordSnapshot
from schemas.lifecycle import AppliedThrough
from schemas.messages import ChatMessage
from schemas.record_import import ImportedGeneration, ImportedRecord, RecordImport


def apply_import(step: Step, event: RecordImport) -> None:
    state = step.state
    if event.record is not None and state.imported != event.import_id:
        _check_fresh(step, event)
        _seed(step, event.record, event.import_id)
    elif state.imported != event.import_id:
        raise Rejected("import_id", f"part {event.part} of import {event.import_id!r} arrived without its "
                                    "part 0 (the record); replay the store again")
    observed = [m for m in event.observed if _take_observed(step, m)]
    if observed:  # the reader's window is "messages without an observation row": these have one
        step.deltas.append(MessagesObserved(
            key=step.state.key, version=step.state.version, at=step.now, cycle_id=f"import-{event.import_id}",
            generation=step.state.record.generation, message_ids=[m.id for m in observed],
            range=message_range(observed) or ""))
    for message in event.unobserved:
        if take_message(step, message):
            step.inserted.append(message)
    last = (event.observed + event.unobserved)
    if last:
        newest = max(last, key=lambda m: (m.created_at, m.id))
        step.update(applied_through=AppliedThrough(message_id=newest.id, created_at=newest.created_at),
                    clock=max(step.state.clock, newest.created_at))
    step.record_changed = True


def _check_fresh(step: Step, event: RecordImport) -> None:
    state, record = step.state, step.state.record
    if state.imported is not None or state.window or state.observed or record.active_observations \
            or record.generation or record.buffered_chunks:
        raise Rejected("record", f"key {state.key!r} already has memory; an import only seeds a new key "
                                 "(delete the thread, or import into a fresh topic prefix)")
    imported = event.record
    assert imported is not None
    if imported.scope != step.config.scope:
        raise Rejected("record.scope", f"the record is {imported.scope}-scoped but this pipeline runs "
                                       f"scope {step.config.scope!r}")


def _seed(step: Step, imported: ImportedRecord, import_id: str) -> None:
    key = step.state.key
    step.update_record(
        id=record_id(key, imported.generation),
        thread_id=imported.thread_id if imported.scope == "thread" else None,
        resource_id=imported.resource_id,
        generation=imported.generation,
        origin_type=imported.origin_type,
        active_observations=imported.active_observations,
        observation_token_count=imported.observation_token_count,
        total_tokens_observed=imported.total_tokens_observed,
        last_observed_at=imported.last_observed_at,
        buffered_chunks=imported.buffered_chunks,
        buffered_reflection=imported.buffered_reflection,
        buffered_reflection_tokens=imported.buffered_reflection_tokens,
        buffered_reflection_input_tokens=imported.buffered_reflection_input_tokens,
        reflected_observation_line_count=imported.reflected_observation_line_count,
        last_buffered_at_tokens=imported.last_buffered_at_tokens,
        last_buffered_at_time=imported.last_buffered_at_time,
        observed_timezone=imported.observed_timezone,
        working_memory=imported.working_memory,
        working_memory_version=1 if imported.working_memory is not None else 0,
        created_at=imported.created_at,
        updated_at=imported.updated_at,
    )
    step.update(imported=import_id, threads={**step.state.threads, **imported.threads},
                step_pending_tokens=imported.pending_message_tokens,
                reflection_buffer_started=imported.buffered_reflection is not None)
    for old in imported.history:
        _history_snapshot(step, old)


def _history_snapshot(step: Step, old: ImportedGeneration) -> None:
    record = step.state.record.model_copy(update={
        "id": record_id(step.state.key, old.generation), "generation": old.generation,
        "origin_type": old.origin_type, "active_observations": old.active_observations,
        "observation_token_count": old.observation_token_count, "last_observed_at": old.last_observed_at,
        "buffered_chunks": (), "buffered_reflection": None, "created_at": old.created_at,
        "updated_at": old.updated_at,
    })
    step.deltas.append(RecordSnapshot(key=step.state.key, version=step.state.version, at=step.now,
                                      record=record, threads={}, pending_message_tokens=0,
                                      unobserved_message_ids=[]))


def _take_observed(step: Step, message: ChatMessage) -> bool:
    state = step.state
    if message.id in state.observed or any(m.id == message.id for m in state.window):
        step.count(duplicate_messages=1)
        return False
    cursor = state.record.last_observed_at
    if cursor is None or message.created_at > cursor - LATE_TOLERANCE_MS:
        step.update(observed={**state.observed, message.id: message.created_at})
    step.frozen.append(message)
    return True
