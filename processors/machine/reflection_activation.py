"""Activating a buffered reflection: it becomes the next generation, no Reflector call (spec §4.8).

For an early trigger (idle TTL, provider change) the guards of :mod:`processors.machine.reflection_guards`
may keep the buffer for the eventual threshold activation. A suppressed activation changes nothing and
emits nothing, so the next step judges it again with a longer tail.
"""

from __future__ import annotations

from processors.machine.generation import roll_over
from processors.machine.lifecycle_events import emit, marker_config
from processors.machine.reflection_guards import Suppression, early_activation_suppressed
from processors.reflector.background_slice import activation_paragraphs
from processors.machine.step import Step
from schemas.lifecycle import Activation, Trigger


def activate_buffered_reflection(step: Step, trigger: Trigger) -> bool:
    """Swap the buffered reflection in; False when a guard suppressed an early trigger."""
    if trigger.triggered_by != "threshold" and suppression(step) is not None:
        return False
    record = step.state.record
    before = record.observation_token_count
    cycle_id = record.buffered_reflection_cycle_id or step.next_cycle_id("reflect-act")
    roll_over(step, record.buffered_reflection or "", record.reflected_observation_line_count)
    emit(step, Activation, cycle_id=cycle_id, operation_type="reflection", activated_at=step.now,
         chunks_activated=1, tokens_activated=before,
         observation_tokens=step.state.record.observation_token_count, messages_activated=0,
         generation=step.state.record.generation, config=marker_config(step, "reflection"),
         **trigger.model_dump())
    return True


def suppression(step: Step) -> Suppression | None:
    """Which guard would keep the buffered reflection from an early activation now, if any."""
    record = step.state.record
    reflection, lines = record.buffered_reflection or "", record.reflected_observation_line_count
    paragraphs = activation_paragraphs(reflection, record.active_observations, lines)  # reflection[, tail's]
    return early_activation_suppressed(
        reflection_tokens=record.buffered_reflection_tokens,
        tail_tokens=step.counter.count_paragraphs(paragraphs[1:]) if len(paragraphs) > 1 else 0,
        combined_tokens=step.counter.count_paragraphs(paragraphs),
        threshold=step.reflection_threshold(),
        # a buffered reflection exists only while async reflection is on, so this is set
        buffer_activation=step.resolved.reflection_buffer_activation or 1.0,
    )
