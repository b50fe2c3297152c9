"""Per-thread metadata OM maintains: continuation hints, the thread title, extracted values (§3.4, §5.5)."""

from __future__ import annotations

from typing import Any

from processors.machine.step import Step
from processors.extraction.working_memory import split_working_memory
from schemas.lifecycle import ThreadUpdate
from schemas.record import ThreadMeta

MIN_TITLE_LENGTH = 3


def meta(step: Step, thread_id: str) -> ThreadMeta:
    return step.state.threads.get(thread_id) or ThreadMeta()


def _store(step: Step, thread_id: str, updated: ThreadMeta) -> None:
    threads = dict(step.state.threads)
    threads[thread_id] = updated
    step.update(threads=threads)
    step.record_changed = True


def set_hints(step: Step, thread_id: str, *, current_task: str | None, suggested_response: str | None) -> None:
    _store(step, thread_id, meta(step, thread_id).model_copy(
        update={"current_task": current_task, "suggested_response": suggested_response}))


def merge_extracted(step: Step, thread_id: str, values: dict[str, Any] | None) -> None:
    """New values win per slug; empty values never erase an earlier one."""
    kept = {k: v for k, v in (values or {}).items() if v not in (None, "", {}, [])}
    if not kept:
        return
    current = meta(step, thread_id)
    _store(step, thread_id, current.model_copy(update={"extracted": {**current.extracted, **kept}}))


def apply_title(step: Step, thread_id: str, title: str | None, cycle_id: str) -> None:
    """Rename when the candidate is long enough and different; announce it with ``thread-update``."""
    candidate = (title or "").strip()
    current = meta(step, thread_id)
    if len(candidate) < MIN_TITLE_LENGTH or candidate == current.thread_title:
        return
    _store(step, thread_id, current.model_copy(update={"thread_title": candidate}))
    record = step.state.record
    step.events.append(
        ThreadUpdate(key=record.key, thread_id=thread_id, resource_id=record.resource_id,
                     record_id=record.id, at=step.now, cycle_id=cycle_id,
                     old_title=current.thread_title, new_title=candidate, timestamp=step.now)
    )


def take_extracted(step: Step, thread_id: str | None, values: dict[str, Any] | None) -> dict[str, Any] | None:
    """Store a new working-memory block on the record; merge the other values into the thread's meta."""
    working_memory, rest = split_working_memory(values)
    record = step.state.record
    if working_memory is not None and working_memory != record.working_memory:
        step.update_record(working_memory=working_memory, working_memory_version=record.working_memory_version + 1)
    if thread_id is not None:
        merge_extracted(step, thread_id, rest)
    return rest
