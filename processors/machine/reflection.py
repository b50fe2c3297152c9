"""Reflection: when to compress the observation log (spec §4.8).

Rules this module keeps:

* Background reflection starts at ``R × reflection.buffer_activation`` over the oldest lines (about
  that many tokens) with a 75 % target; at ``R`` it is activated. Without one ready, a synchronous
  reflection starts at ``reflection.block_after`` (or at ``R`` when async reflection is off).
* Below ``R``, reflection's own idle TTL and provider-change options (opt-in, never inherited from the
  top level) may trigger early: they activate a buffered reflection if its guards allow
  (:mod:`processors.machine.reflection_activation`), or, with async reflection off, run a synchronous one.
  An early trigger acts at most once per idle period (``KeyState.early_reflection_for``).
* An over-threshold result of N tokens suppresses another threshold-triggered synchronous reflection
  of exactly N tokens (no loop on an incompressible log); a failure suppresses a retry at the same
  size. Early triggers are exempt, as in Mastra: they reflect because the cache is cold.
* The new generation itself is :mod:`processors.machine.generation`'s; a result for an older generation is
  stale and dropped.
* The job carries the thread's current hints and extracted values; a synchronous result's current task
  and suggested response replace them, and a hint the Reflector left out is kept.
* The custom extractors' values of a reflection (``reflection.extract``) merge into the thread's
  extracted values when the result arrives, a background one's too (Mastra persists them before it
  stores the buffered reflection), and ride on its end event with the extraction failures.
"""

from __future__ import annotations

from processors.machine.budget import budget_paused
from processors.machine.early_trigger import THRESHOLD, early_trigger
from processors.machine.generation import roll_over
from processors.machine.lifecycle_events import duration, emit, marker_config
from processors.machine.reflection_activation import activate_buffered_reflection
from processors.reflector.background_slice import background_slice
from processors.reflector.levels import start_level
from processors.reflector.types import ReflectorMode
from processors.machine.state import InFlight
from processors.machine.step import Step
from processors.machine.thread_meta import merge_extracted, meta, set_hints
from schemas.jobs import PriorMetadata, ReflectJob, ReflectResult
from schemas.lifecycle import BufferingEnd, BufferingFailed, BufferingStart
from schemas.lifecycle import ObservationEnd, ObservationFailed, ObservationStart, Trigger


def maybe_reflect(step: Step) -> None:
    resolved = step.resolved
    record = step.state.record
    threshold = step.reflection_threshold()
    observed = record.observation_token_count
    activation = resolved.reflection_buffer_activation
    background = step.flight("reflect-background")
    can_start_background = (
        activation is not None
        and background is None
        and not step.state.reflection_buffer_started
        and not record.buffered_reflection
        and not budget_paused(step)
    )
    if can_start_background and threshold * activation <= observed < threshold:
        _start(step, "background")
        return
    trigger = THRESHOLD if observed >= threshold else _early_trigger(step)
    if trigger is None or step.flight("reflect-sync") is not None:
        return
    if activation is not None:
        if record.buffered_reflection:
            if activate_buffered_reflection(step, trigger):
                _spend(step, trigger)
            return
        block_after = resolved.reflection_block_after
        if block_after is None or observed < block_after:
            if can_start_background and observed >= threshold * activation:
                _start(step, "background")
            return
    if trigger.triggered_by == "threshold" and step.state.reflection_suppressed_at == observed:
        return
    if budget_paused(step):
        return
    _spend(step, trigger)
    _start(step, "sync", trigger)


def _early_trigger(step: Step) -> Trigger | None:
    """Reflection's own idle/provider trigger, once per idle period and only with a log to reflect."""
    state = step.state
    if not state.record.active_observations or state.early_reflection_for == state.last_activity_at:
        return None
    resolved = step.resolved
    return early_trigger(
        step, resolved.reflection_activate_after_idle, resolved.reflection_activate_on_provider_change
    )


def _spend(step: Step, trigger: Trigger) -> None:
    """Mark this idle period's early trigger as used (a threshold trigger is not limited)."""
    if trigger.triggered_by != "threshold":
        step.update(early_reflection_for=step.state.last_activity_at)


def _start(step: Step, mode: str, trigger: Trigger | None = None) -> None:
    """Issue a Reflector job; ``trigger`` (sync only) says why, on its start and end events."""
    record = step.state.record
    text = record.active_observations
    threshold = step.reflection_threshold()
    if mode == "background":
        activation = step.resolved.reflection_buffer_activation or 1.0
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
            prior_metadata=_prior(step),
        )
    )
    kind = "reflect-sync" if mode == "sync" else "reflect-background"
    step.add_flight(InFlight(cycle_id=cycle_id, kind=kind, issued_at=step.now, generation=record.generation,
                             tokens=input_tokens, line_count=line_count, trigger=trigger))
    config = marker_config(step, "reflection")
    if mode == "sync":
        emit(step, ObservationStart, cycle_id=cycle_id, operation_type="reflection", started_at=step.now,
             config=config, tokens_to_observe=input_tokens, **_trigger_fields(trigger))
    else:
        emit(step, BufferingStart, cycle_id=cycle_id, operation_type="reflection", started_at=step.now,
             config=config, tokens_to_buffer=input_tokens)


def _prior(step: Step) -> PriorMetadata | None:
    """Thread scope: the thread's hints and extracted values, for the Reflector to carry forward."""
    thread_id = step.state.record.thread_id
    if thread_id is None or thread_id not in step.state.threads:
        return None
    kept = meta(step, thread_id)
    return PriorMetadata(current_task=kept.current_task, suggested_response=kept.suggested_response,
                         extracted=dict(kept.extracted))


def _trigger_fields(trigger: Trigger | None) -> dict:
    """A sync reflection's trigger for its events (a flight from before triggers were kept has none)."""
    return trigger.model_dump() if trigger is not None else {}


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
    roll_over(step, result.observations, flight.line_count)
    after = step.state.record.observation_token_count
    step.update(reflection_suppressed_at=after if after >= step.reflection_threshold() else None)
    thread_id = step.state.record.thread_id
    if thread_id and (result.current_task or result.suggested_response):
        kept = meta(step, thread_id)  # a hint the Reflector did not write stays (Mastra's ``??``)
        set_hints(step, thread_id, current_task=result.current_task or kept.current_task,
                  suggested_response=result.suggested_response or kept.suggested_response)
    _take_extracted(step, result)
    emit(step, ObservationEnd, cycle_id=flight.cycle_id, operation_type="reflection",
         completed_at=result.completed_at, duration_ms=duration(result), tokens_observed=before,
         observation_tokens=after, observations=step.state.record.active_observations,
         extracted_values=result.extracted_values, extraction_failures=result.extraction_failures,
         warnings=result.warnings, **_trigger_fields(flight.trigger))


def _take_extracted(step: Step, result: ReflectResult) -> None:
    """Thread scope: the reflection's custom values join the thread's (resource scope has no thread)."""
    thread_id = step.state.record.thread_id
    if thread_id:
        merge_extracted(step, thread_id, result.extracted_values)



def _store_buffered(step: Step, flight: InFlight, result: ReflectResult) -> None:
    tokens = step.counter.count_observations(result.observations)
    step.update_record(
        buffered_reflection=result.observations,
        buffered_reflection_tokens=tokens,
        buffered_reflection_input_tokens=flight.tokens,
        reflected_observation_line_count=flight.line_count,
        buffered_reflection_cycle_id=flight.cycle_id,
    )
    _take_extracted(step, result)
    emit(step, BufferingEnd, cycle_id=flight.cycle_id, operation_type="reflection",
         completed_at=result.completed_at, duration_ms=duration(result),
         tokens_buffered=flight.tokens, buffered_tokens=tokens, observations=result.observations,
         extracted_values=result.extracted_values, extraction_failures=result.extraction_failures,
         warnings=result.warnings)
