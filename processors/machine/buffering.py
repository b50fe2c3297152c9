"""Background observation: when to buffer a chunk, and storing the chunk a worker returns (§4.2, §4.4).

Rules this module keeps:

* At most one buffering cycle per key is in flight; its messages are excluded from every other
  cycle, so no message is ever observed twice (Mastra's overlapping ``buffer()`` calls, H8).
* The boundary (``last_buffered_at_tokens``) moves when a cycle is *decided*, before any model call,
  so the next message does not trigger again.
* A chunk is stored only if every message it covers is still unobserved; a chunk that lost a race
  with a synchronous observation is dropped and counted, never applied.
* Chunks survive a reflection's new generation (fix of the stranded-chunk bug P1).
"""

from __future__ import annotations

from processors.machine.observation_groups import message_range, wrap_group
from processors.machine.lifecycle_events import duration, emit, marker_config
from processors.machine.budget import budget_paused
from processors.machine.call_size import within_call_size
from processors.machine.observer_latch import observer_latched
from processors.machine.safe_prefix import select_safe_buffer_prefix
from processors.machine.state import InFlight
from processors.machine.step import Step
from processors.machine.thread_meta import apply_title, take_extracted
from processors.machine.token_math import should_trigger_buffer
from schemas.deltas import ChunkChanged
from schemas.jobs import ObserveJob, ObserveResult, PendingReflection, PriorMetadata
from schemas.lifecycle import BufferingEnd, BufferingFailed, BufferingStart
from schemas.messages import ChatMessage
from schemas.record import BufferedChunk

def pending_reflection(step: Step) -> PendingReflection | None:
    """A buffered reflection stands in for the lines it covers in the Observer's prior context."""
    record = step.state.record
    if not record.buffered_reflection:
        return None
    return PendingReflection(text=record.buffered_reflection, line_count=record.reflected_observation_line_count)


def maybe_buffer(step: Step, *, on_idle: bool = False) -> None:
    """Start a buffering cycle when pending tokens crossed the next interval (or at turn end)."""
    resolved = step.resolved
    buffer_tokens = resolved.buffer_tokens
    if buffer_tokens is None or step.flight("buffer") is not None or observer_latched(step) \
            or budget_paused(step):
        return
    pending = step.pending()
    threshold = step.message_threshold()
    if not on_idle:
        boundary = step.state.record.last_buffered_at_tokens
        if not should_trigger_buffer(pending, boundary, threshold, buffer_tokens):
            return
        step.update_record(last_buffered_at_tokens=pending)
    safe = within_call_size(step, select_safe_buffer_prefix(step.state.unbusy_messages()))  # bounded: a turn's end can come mid-burst
    tokens = step.message_tokens(safe)
    if not safe or (not on_idle and tokens < buffer_tokens / 2):
        return
    cycle_id = step.next_cycle_id("buffer-obs")
    step.jobs.append(
        ObserveJob(
            **step.job_header(cycle_id),
            mode="buffer",
            messages=safe,
            tokens_to_observe=tokens,
            prior_observations=step.state.record.active_observations,
            buffered_observations=[c.observations for c in step.state.record.buffered_chunks],
            pending_reflection=pending_reflection(step),
            prior_metadata=PriorMetadata(),
            working_memory=step.state.record.working_memory,
            continuation_hints=False,
            timezone=step.config.timezone,
        )
    )
    step.add_flight(InFlight(cycle_id=cycle_id, kind="buffer", issued_at=step.now,
                             generation=step.state.record.generation,
                             message_ids=tuple(m.id for m in safe), tokens=tokens))
    emit(step, BufferingStart, cycle_id=cycle_id, operation_type="observation", started_at=step.now,
         tokens_to_buffer=tokens, thread_ids=sorted({m.thread_id for m in safe}),
         config=marker_config(step))


def apply_buffer_result(step: Step, flight: InFlight, result: ObserveResult) -> None:
    step.end_flight(flight.cycle_id)
    if not result.ok:
        emit(step, BufferingFailed, cycle_id=flight.cycle_id, operation_type="observation",
             failed_at=result.completed_at, duration_ms=duration(result),
             tokens_attempted=flight.tokens, error=result.error or "buffering failed")
        return
    covered = _still_in_window(step, flight.message_ids)
    if not result.observations.strip():
        return
    text = result.observations
    if step.config.retrieval_config() is not None and covered:
        text = wrap_group(text, flight.cycle_id, message_range(covered) or ":")
    chunk = BufferedChunk(
        id=f"ombuf-{flight.cycle_id}",
        cycle_id=flight.cycle_id,
        observations=text,
        token_count=step.counter.count_observations(text),
        message_ids=tuple(m.id for m in covered),
        message_tokens=step.message_tokens(covered),
        last_observed_at=max((m.created_at for m in covered), default=step.now) + 1,
        created_at=step.now,
        thread_title=result.thread_title,
        extracted_values=result.extracted_values,
        extraction_failures=result.extraction_failures,
    )
    delta = {"key": step.state.key, "version": step.state.version, "at": step.now,
             "generation": step.state.record.generation, "chunk": chunk}
    if len(covered) != len(flight.message_ids):
        step.count(stale_results=1)
        step.deltas.append(ChunkChanged(**delta, status="dropped"))
        return
    record = step.state.record
    step.update_record(
        buffered_chunks=record.buffered_chunks + (chunk,),
        last_buffered_at_time=chunk.last_observed_at,
    )
    thread_id = record.thread_id
    take_extracted(step, thread_id, result.extracted_values)
    if thread_id is not None:
        apply_title(step, thread_id, result.thread_title, flight.cycle_id)
    step.deltas.append(ChunkChanged(**delta, status="buffered"))
    emit(step, BufferingEnd, cycle_id=flight.cycle_id, operation_type="observation",
         completed_at=result.completed_at, duration_ms=duration(result),
         tokens_buffered=flight.tokens,
         buffered_tokens=sum(c.token_count for c in step.state.record.buffered_chunks),
         observations=result.observations, extracted_values=result.extracted_values,
         extraction_failures=result.extraction_failures, warnings=result.warnings,
         message_ids=list(chunk.message_ids), range=message_range(covered))


def _still_in_window(step: Step, ids: tuple[str, ...]) -> list[ChatMessage]:
    """The messages of ``ids`` still in the window, in the order of ``ids``. Found by a walk back from the
    window's end that stops once every id is found: a cycle's messages are the newest when its answer
    comes soon, and the chunks buffered before it fill the older part (a pass over the whole window
    cost ~20 us a result); the ids are the window's as its token map lists them (:meth:`KeyState.window_ids`)."""
    wanted = set(ids)
    found: dict[str, ChatMessage] = {}
    for m, mid in zip(reversed(step.state.window), reversed(step.state.window_ids())):
        if mid in wanted:
            found.setdefault(mid, m)
            if len(found) == len(wanted):
                break
    return [found[i] for i in ids if i in found]
