"""Synchronous observation: the threshold was crossed and nothing could be activated (spec §4.6).

In Mastra the agent's turn blocks on this call; here the processor only issues the job and keeps
folding messages. The reader serves the full unobserved window until the result is applied, so an
agent never waits on the Observer — it only sees a larger context for a while.

Rules this module keeps:

* One synchronous cycle per key in flight; it covers the window minus messages already in chunks or
  in another cycle, so nothing is observed twice (Mastra accepts a duplicate here).
* The result is applied by message id: the cursor becomes ``max(cursor, newest observed created_at)``
  (monotonic), the covered messages leave the window, everything else stays.
* Resource scope: the job carries each thread's hints, title and extracted values, and the result
  brings each thread's new ones back to that thread's metadata (§4.9), as thread scope does for one.
"""

from __future__ import annotations

from processors.machine.activation import append_observations
from processors.machine.buffering import pending_reflection
from processors.machine.observation_groups import message_range, wrap_group
from processors.machine.lifecycle_events import duration, emit, marker_config
from processors.machine.state import InFlight
from processors.machine.step import Step
from processors.machine.thread_sections import merge_cycle
from processors.machine.thread_meta import apply_title, meta, set_hints, take_extracted
from schemas.deltas import MessagesObserved
from schemas.jobs import ObserveJob, ObserveResult, PriorMetadata
from schemas.lifecycle import ObservationEnd, ObservationFailed, ObservationStart
from schemas.messages import ChatMessage


def start_observation(step: Step, messages: list[ChatMessage]) -> None:
    cycle_id = step.next_cycle_id("observe")
    tokens = step.message_tokens(messages)
    record = step.state.record
    prior = _prior(step, record.thread_id) if record.thread_id else PriorMetadata()
    thread_priors = (
        {t: _prior(step, t) for t in dict.fromkeys(m.thread_id for m in messages) if t in step.state.threads}
        if record.scope == "resource" else {}
    ) or None
    step.jobs.append(
        ObserveJob(
            **step.job_header(cycle_id),
            mode="sync",
            messages=messages,
            tokens_to_observe=tokens,
            prior_observations=record.active_observations,
            pending_reflection=pending_reflection(step),
            prior_metadata=prior,
            thread_priors=thread_priors,
            working_memory=record.working_memory,
            continuation_hints=True,
            timezone=step.config.timezone,
        )
    )
    step.add_flight(InFlight(cycle_id=cycle_id, kind="observe", issued_at=step.now,
                             generation=record.generation,
                             message_ids=tuple(m.id for m in messages), tokens=tokens))
    emit(step, ObservationStart, cycle_id=cycle_id, operation_type="observation",
         started_at=step.now, tokens_to_observe=tokens,
         thread_ids=sorted({m.thread_id for m in messages}), config=marker_config(step))


def _prior(step: Step, thread_id: str) -> PriorMetadata:
    thread_meta = meta(step, thread_id)
    return PriorMetadata(current_task=thread_meta.current_task, suggested_response=thread_meta.suggested_response,
                         thread_title=thread_meta.thread_title, extracted=dict(thread_meta.extracted))


def apply_observation_result(step: Step, flight: InFlight, result: ObserveResult) -> bool:
    """Apply a synchronous Observer result; returns whether the record changed."""
    step.end_flight(flight.cycle_id)
    if not result.ok:
        emit(step, ObservationFailed, cycle_id=flight.cycle_id, operation_type="observation",
             failed_at=result.completed_at, duration_ms=duration(result),
             tokens_attempted=flight.tokens, error=result.error or "observation failed")
        return False
    ids = set(flight.message_ids)
    covered = [m for m in step.state.window if m.id in ids]
    if not covered:
        step.count(stale_results=1)
        return False
    record = step.state.record
    newest = max(m.created_at for m in covered)
    addition = result.observations
    if addition.strip() and step.config.retrieval_config() is not None:
        addition = wrap_group(addition, flight.cycle_id, message_range(covered) or ":")
    if not addition.strip():
        text = record.active_observations
    elif record.scope == "resource" and step.config.retrieval_config() is None:
        newest_by_thread: dict[str, int] = {}
        for m in covered:
            newest_by_thread[m.thread_id] = max(newest_by_thread.get(m.thread_id, 0), m.created_at)
        text = merge_cycle(record.active_observations, addition, newest_by_thread, newest)
    else:
        text = append_observations(record.active_observations, addition, newest)
    step.update_record(
        active_observations=text,
        observation_token_count=step.counter.count_observation_lines(text),
        total_tokens_observed=record.total_tokens_observed + flight.tokens,
        last_observed_at=max(record.last_observed_at or 0, newest),
    )
    [removed] = step.remove_from_window(ids)
    thread_id = record.thread_id
    take_extracted(step, thread_id, result.extracted_values)
    if thread_id is not None:
        set_hints(step, thread_id, current_task=result.current_task,
                  suggested_response=result.suggested_response)
        apply_title(step, thread_id, result.thread_title, flight.cycle_id)
    for other_id, values in (result.thread_values or {}).items():  # resource scope: each thread its own
        take_extracted(step, other_id, values.extracted)
        set_hints(step, other_id, current_task=values.current_task, suggested_response=values.suggested_response)
        apply_title(step, other_id, values.thread_title, flight.cycle_id)
    covered_range = message_range(removed)
    step.deltas.append(
        MessagesObserved(key=step.state.key, version=step.state.version, at=step.now,
                         cycle_id=flight.cycle_id, generation=record.generation,
                         message_ids=[m.id for m in removed], range=covered_range or "")
    )
    emit(step, ObservationEnd, cycle_id=flight.cycle_id, operation_type="observation",
         completed_at=result.completed_at, duration_ms=duration(result),
         tokens_observed=flight.tokens,
         observation_tokens=step.counter.count_observations(result.observations),
         observations=result.observations, current_task=result.current_task,
         suggested_response=result.suggested_response, extracted_values=result.extracted_values,
         extraction_failures=result.extraction_failures, warnings=result.warnings,
         message_ids=[m.id for m in removed], range=covered_range)
    return True
