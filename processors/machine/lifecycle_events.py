"""Builders for the lifecycle events a step emits, so rule modules state *what* happened only.

Every event gets the key's identity (key, thread, resource, record) and the step's event time from
here; the rule modules pass the fields that differ.
"""

from __future__ import annotations

from typing import Any

from processors.machine.step import Step
from schemas.lifecycle import MarkerConfig, OperationType, StatusEvent
from schemas.jobs import ResultHeader
from processors.machine.token_math import projected_message_removal


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
    resolved = step.config.resolved
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


_validate_status = StatusEvent.__pydantic_validator__.validate_python  # model_validate without its wrapper


def status_event(step: Step) -> StatusEvent:
    """The ``data-om-status`` windows after this step (spec §6 and §4.2)."""
    record = step.state.record
    resolved = step.config.resolved
    pending = step.pending()
    chunks = record.buffered_chunks
    chunk_message_tokens = [c.message_tokens for c in chunks]
    ratio = resolved.activation_ratio
    message_threshold = step.message_threshold()
    projected = (
        projected_message_removal(chunk_message_tokens, pending, message_threshold, ratio)
        if ratio is not None
        else 0
    )
    kinds = {flight.kind for flight in step.state.in_flight}
    buffering, reflecting = "buffer" in kinds, "reflect-background" in kinds
    windows = {
        "active": {
            "messages": {"tokens": pending, "threshold": message_threshold},
            "observations": {"tokens": record.observation_token_count, "threshold": step.reflection_threshold()},
        },
        "buffered": {
            "observations": {
                "chunks": len(chunks),
                "message_tokens": min(sum(chunk_message_tokens), pending),
                "projected_message_removal": projected,
                "observation_tokens": sum(c.token_count for c in chunks),
                "status": "running" if buffering else ("complete" if chunks else "idle"),
            },
            "reflection": {
                "input_observation_tokens": record.buffered_reflection_input_tokens,
                "observation_tokens": record.buffered_reflection_tokens,
                "status": "running" if reflecting else ("complete" if record.buffered_reflection else "idle"),
            },
        },
    }
    # one validation of the whole tree: the nested windows are built inside pydantic-core
    return _validate_status({
        **identity(step),
        "windows": windows,
        "generation": record.generation,
        "applied_through": step.state.applied_through,
    })
