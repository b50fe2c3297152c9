"""What the core builds without validating (processors/machine/built.py) is what validation builds:
the same fields, values, set fields at every level and bytes — every status event (shared
sub-windows, unvalidated inner nodes: processors/machine/status.py) with its ``applied_through``
(processors/machine/intake.py), every observed copy of a message and every record snapshot
(processors/machine/decide.py), of conversations that meet every window state (buffering running and
complete, reflection buffered, resource scope, no buffering)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from bench.corpus import messages
from processors import simulate
from processors.config import OMConfig
from processors.machine import decide
from processors.simulate import simulate as run_simulation
from schemas.deltas import MessageInserted, RecordSnapshot
from schemas.lifecycle import StatusEvent
from streams.harness.echo_model import respond

SMALL = {"observation": {"message_tokens": 3000}, "reflection": {"observation_tokens": 1500}}


def validated(event: StatusEvent) -> StatusEvent:
    """The event as validating its dict tree builds it (how the core built it before)."""
    fields = {name: getattr(event, name) for name in ("key", "thread_id", "resource_id", "record_id", "at",
                                                       "generation")}
    applied = event.applied_through and event.applied_through.model_dump()  # built by intake from a message
    return StatusEvent.model_validate({**fields, "windows": event.windows.model_dump(), "applied_through": applied})


def validated_copy(delta: MessageInserted) -> MessageInserted:
    """The observed copy as ``MessageInserted(**fields)`` builds it (how the core built it before)."""
    return MessageInserted.model_validate({"key": delta.key, "version": delta.version, "at": delta.at,
                                           "message": delta.message, "observed": True})


def validated_snapshot(delta: RecordSnapshot) -> RecordSnapshot:
    """The snapshot as ``RecordSnapshot(**fields)`` builds it (how the core built it before)."""
    return RecordSnapshot.model_validate({name: getattr(delta, name) for name in (
        "key", "version", "at", "record", "threads", "pending_message_tokens", "unobserved_message_ids")})


def same(built: Any, reference: Any, where: str = "event") -> None:
    assert type(built) is type(reference), where
    if not isinstance(reference, BaseModel):
        assert built == reference, where
        return
    assert built.model_fields_set == reference.model_fields_set, where
    assert built.__pydantic_extra__ == reference.__pydantic_extra__ and built.__pydantic_private__ is None, where
    assert list(built.__dict__) == list(reference.__dict__), where
    for name, value in reference.__dict__.items():
        same(built.__dict__[name], value, f"{where}.{name}")


@pytest.mark.parametrize(("options", "window_states"), [
    (SMALL, 4),  # buffering running/complete, reflection idle/running/complete
    ({**SMALL, "scope": "resource"}, 1),  # resource scope: no thread id, no buffering
    ({"observation": {"message_tokens": 3000, "buffer_tokens": False}}, 1),
])
def test_every_status_event_observed_copy_and_snapshot_is_what_validation_builds(
        options: dict, window_states: int, monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[StatusEvent] = []
    copies: list[MessageInserted] = []
    snapshots: list[RecordSnapshot] = []

    def recording(state, event, config):
        decision = decide(state, event, config)
        events.extend(e for e in decision.events if e.type == "status")
        copies.extend(d for d in decision.deltas if isinstance(d, MessageInserted) and d.observed)
        snapshots.extend(d for d in decision.deltas if isinstance(d, RecordSnapshot))
        return decision

    monkeypatch.setattr(simulate, "decide", recording)
    for _ in run_simulation(list(messages(2, 300, salt="status")), OMConfig.from_mastra(options), respond, 300_000):
        pass
    statuses = {(e.windows.buffered.observations.status, e.windows.buffered.reflection.status) for e in events}
    assert len(events) > 600 and len(statuses) >= window_states
    assert len(copies) > 300 and len(snapshots) > 20
    for made, reference in [(e, validated(e)) for e in events] + [(c, validated_copy(c)) for c in copies] + \
            [(s, validated_snapshot(s)) for s in snapshots]:
        same(made, reference)
        assert made.to_bytes() == reference.to_bytes()
