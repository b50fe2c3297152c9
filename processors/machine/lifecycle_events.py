"""Builders for the lifecycle events a step emits, so rule modules state *what* happened only.

Every event gets the key's identity (key, thread, resource, record) and the step's event time from
here; the rule modules pass the fields that differ.
"""

from __future__ import annotations

from typing import Any

from processors.machine.step import Step
from schemas.lifecycle import MarkerConfig, OperationType
from schemas.jobs import ResultHeader


def identity(step: Step) -> dict[str, Any]:
    record = step.state.record
    return {
        "key": record.key,
        "thread_id": record.thread_id,
        "resource_id": record.resource_id,
        "record_id": record.id,
        "at": step.now,
    }


def marker_config(step: Step, operation: OperationType = "observation") -> MarkerConfig:
    """The thresholds in force; the idle TTL is the operation's own (reflection's is not inherited)."""
    resolved = step.resolved
    reflection = operation == "reflection"
    ttl = resolved.reflection_activate_after_idle if reflection else resolved.activate_after_idle
    return MarkerConfig(
        message_tokens=step.message_threshold(),
        observation_tokens=step.reflection_threshold(),
        scope=step.state.record.scope,
        activate_after_idle=ttl,
    )


def duration(result: ResultHeader) -> int:
    return max(0, result.completed_at - result.started_at)


def emit(step: Step, event_type: type, **fields: Any) -> None:
    step.events.append(event_type(**identity(step), **fields))
