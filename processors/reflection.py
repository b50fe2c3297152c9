"""Reflection: when to compress the observation log, and rolling over to a new generation (§4.8).

Rules this module keeps:

* Background reflection starts at ``R × reflection.buffer_activation`` over the oldest lines (about
  that many tokens) with a 75 % target; at ``R`` it is activated. Without one ready, a synchronous
  reflection starts at ``reflection.block_after`` (or at ``R`` when async reflection is off).
* A reflection covers the first ``line_count`` lines it was given. Lines appended meanwhile (an
  activation while the Reflector ran) are kept as the tail of the new generation — Mastra's
  synchronous path wrote its stale snapshot instead (P6).
* A new generation carries the buffered chunks and the cursor over (fixes P1 and the cursor bug);
  a result for an older generation is stale and dropped.
* An over-threshold result of N tokens suppresses another synchronous reflection of exactly N tokens
  (no loop on an incompressible log); a failure suppresses a retry at the same size.
"""

from __future__ import annotations

import uuid

from processors.lifecycle_events import duration, emit
from processors.observation_groups import spanning_range, wrap_group
from processors.reflector.background_slice import activation_text, background_slice
from processors.reflector.levels import start_level
from processors.reflector.types import ReflectorMode
from processors.state import InFlight
from processors.step import Step
from processors.thread_meta import set_hints
from schemas.jobs import ReflectJob, ReflectResult
from schemas.lifecycle import Activation, BufferingEnd, BufferingFailed, BufferingStart
from schemas.lifecycle import ObservationEnd, ObservationFailed, ObservationStart
from processors.lifecycle_events import marker_config

_RECORD_NAMESPACE = uuid.UUID("6f1d2f0e-9f5b-4d0a-8f7e-3c1f4b9a2e10")


def record_id(key: str, generation: int) -> str:
    """Deterministic per (key, generation): a replay rebuilds the same ids (ARCHITECTURE rule 5)."""
    return str(uuid.uuid5(_RECORD_NAMESPACE, f"{key}#{generation}"))


def maybe_reflect(step: Step) -> None:
    resolved = step.config.resolved
    record = step.state.record
    threshold = step.reflection_threshold()
    observed = record.observation_token_count
    activation = resolved.reflection_buffer_activation
    background = step.state.flight("reflect-background")
    can_start_background = (
        activation is not None
        and background is None
        and not step.state.reflection_buffer_started
        and not record.buffered_reflection
    )
    if can_start_background and threshold * activation <= observed < threshold:
        _start(step, "background")
        return
    if observed < threshold or step.state.flight("reflect-sync") is not None:
        return
    if activation is not None:
        if record.buffered_reflection:
            _activate_buffered(step)
            return
        block_after = resolved.reflection_block_after
        if block_after is None or observed < block_after:
            if can_start_background:
                _start(step, "background")
            return
    if step.state.reflection_suppressed_at == observed:
        return
    _start(step, "sync")


def _start(step: Step, mode: str) -> None:
    record = step.state.record
    text = record.active_observations
    threshold = step.reflection_threshold()
    if mode == "background":
        activation = step.config.resolved.reflection_buffer_activation or 1.0
        piece = background_slice(text, record.observation_token_count, threshold, activation)
        line_count, input_tokens, target = piece.line_count, piece.slice_tokens, piece.target
        cycle_id = step.next_cycle_id("reflect-buf")
        step.update(reflection_buffer_started=True)
    else:
        line_count, input_tokens, target = len(text.split("\n")), record.observation_token_count, threshold
        cycle_id = step.next_cycle_id("reflect")
    observations = "\n".join(text.split("\n")[:line_count])
    step.jobs.append(
        ReflectJob(
            **step.job_header(cycle_id),
            mode="sync" if mode == "sync" else "background",
            observations=observations,
            line_count=line_count,
            input_tokens=input_tokens,
            target_tokens=target,
            start_level=start_level(ReflectorMode(mode), _model_name(step)),
            continuation_hints=mode == "sync",
        )
    )
    kind = "reflect-sync" if mode == "sync" else "reflect-background"
    step.add_flight(InFlight(cycle_id=cycle_id, kind=kind, issued_at=step.now,
                             generation=record.generation, tokens=input_tokens, line_count=line_count))
    start_type = ObservationStart if mode == "sync" else BufferingStart
    tokens_field = "tokens_to_observe" if mode == "sync" else "tokens_to_buffer"
    emit(step, start_type, cycle_id=cycle_id, operation_type="reflection", started_at=step.now,
         config=marker_config(step), **{tokens_field: input_tokens})


def _model_name(step: Step) -> str:
    model = step.config.reflector_model()
    return model if isinstance(model, str) else ""


def apply_reflection_result(step: Step, flight: InFlight, result: ReflectResult) -> None:
    step.end_flight(flight.cycle_id)
    background = flight.kind == "reflect-background"
    if not result.ok or not result.observations.strip():
        error = result.error or "the Reflector returned no observations"
        failed = BufferingFailed if background else ObservationFailed
        emit(step, failed, cycle_id=flight.cycle_id, operation_type="reflection",
             failed_at=result.completed_at, duration_ms=duration(result),
             tokens_attempted=flight.tokens, error=error)
        if background:
            step.update(reflection_buffer_started=False)
        else:
            step.update(reflection_suppressed_at=step.state.record.observation_token_count)
        return
    if flight.generation != step.state.record.generation:
        step.count(stale_results=1)
        return
    if background:
        _store_buffered(step, flight, result)
        return
    before = step.state.record.observation_token_count
    _roll_over(step, result.observations, flight.line_count)
    after = step.state.record.observation_token_count
    step.update(reflection_suppressed_at=after if after >= step.reflection_threshold() else None)
    if result.suggested_response and step.state.record.thread_id:
        set_hints(step, step.state.record.thread_id, current_task=None,
                  suggested_response=result.suggested_response)
    emit(step, ObservationEnd, cycle_id=flight.cycle_id, operation_type="reflection",
         completed_at=result.completed_at, duration_ms=duration(result), tokens_observed=before,
         observation_tokens=after, observations=step.state.record.active_observations)


def _store_buffered(step: Step, flight: InFlight, result: ReflectResult) -> None:
    tokens = step.counter.count_observations(result.observations)
    step.update_record(
        buffered_reflection=result.observations,
        buffered_reflection_tokens=tokens,
        buffered_reflection_input_tokens=flight.tokens,
        reflected_observation_line_count=flight.line_count,
        buffered_reflection_cycle_id=flight.cycle_id,
    )
    emit(step, BufferingEnd, cycle_id=flight.cycle_id, operation_type="reflection",
         completed_at=result.completed_at, duration_ms=duration(result),
         tokens_buffered=flight.tokens, buffered_tokens=tokens, observations=result.observations)


def _activate_buffered(step: Step) -> None:
    record = step.state.record
    before = record.observation_token_count
    cycle_id = record.buffered_reflection_cycle_id or step.next_cycle_id("reflect-act")
    _roll_over(step, record.buffered_reflection or "", record.reflected_observation_line_count)
    emit(step, Activation, cycle_id=cycle_id, operation_type="reflection", activated_at=step.now,
         chunks_activated=1, tokens_activated=before,
         observation_tokens=step.state.record.observation_token_count, messages_activated=0,
         generation=step.state.record.generation, config=marker_config(step),
         triggered_by="threshold")


def _roll_over(step: Step, reflection: str, line_count: int) -> None:
    """Start generation + 1 from the stored head: reflection + uncovered tail, chunks carried over."""
    record = step.state.record
    if step.config.retrieval_config() is not None:
        covered = "\n".join(record.active_observations.split("\n")[:line_count])
        reflection = wrap_group(reflection, f"reflection:{record.key}:{record.generation}",
                                spanning_range(covered), kind="reflection")
    text = activation_text(reflection, record.active_observations, line_count)
    generation = record.generation + 1
    step.update(
        record=record.model_copy(update={
            "id": record_id(record.key, generation),
            "generation": generation,
            "origin_type": "reflection",
            "active_observations": text,
            "observation_token_count": step.counter.count_observations(text),
            "buffered_reflection": None,
            "buffered_reflection_tokens": 0,
            "buffered_reflection_input_tokens": 0,
            "reflected_observation_line_count": 0,
            "buffered_reflection_cycle_id": None,
            "last_buffered_at_tokens": 0,
            "created_at": step.now,
            "updated_at": step.now,
        }),
        reflection_buffer_started=False,
    )
    step.record_changed = True
