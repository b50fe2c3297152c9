"""Sample wire models shared by the schema tests: one of every control and lifecycle event."""

from __future__ import annotations

from schemas.base import SchemaError
from schemas.control import (
    ConfigOverride,
    IdleTick,
    ProviderChange,
    ThreadDeleted,
    TurnEnd,
    TurnStart,
)
from schemas.dlq import DeadLetter
from schemas.lifecycle import (
    Activation,
    BufferingEnd,
    BufferingFailed,
    BufferingStart,
    ObservationEnd,
    ObservationFailed,
    ObservationStart,
    StatusEvent,
    ThreadUpdate,
)
from schemas.messages import ChatMessage, DataPart, TextPart, ToolInvocationPart

AT = 1_700_000_000_000
THREAD = {"thread_id": "t1", "resource_id": "u1"}
RECORD = {"key": "thread:t1", "thread_id": "t1", "resource_id": "u1", "record_id": "r1", "at": AT}
CYCLE = {**RECORD, "cycle_id": "buffer-obs-1700000000000-abcdefghi", "operation_type": "observation"}
CONFIG = {"message_tokens": 30_000, "observation_tokens": 40_000, "scope": "thread"}
WINDOWS = {
    "active": {
        "messages": {"tokens": 12_000, "threshold": 30_000},
        "observations": {"tokens": 800, "threshold": 40_000},
    },
    "buffered": {
        "observations": {
            "chunks": 2,
            "message_tokens": 9_000,
            "projected_message_removal": 9_000,
            "observation_tokens": 700,
            "status": "complete",
        },
        "reflection": {"input_observation_tokens": 0, "observation_tokens": 0, "status": "idle"},
    },
}

CONTROL_EVENTS = [
    TurnStart(**THREAD, at=AT, model="openai/gpt-5"),
    TurnEnd(**THREAD, at=AT),
    IdleTick(key="resource:u1", at=AT),
    ProviderChange(thread_id="t1", at=AT, model="anthropic/claude-sonnet-4-5"),
    ThreadDeleted(**THREAD, at=AT),
    ConfigOverride(
        **THREAD,
        at=AT,
        config={"observation": {"message_tokens": 5_000}, "reflection": {"observation_tokens": 9_000}},
    ),
]

LIFECYCLE_EVENTS = [
    StatusEvent(
        **RECORD,
        windows=WINDOWS,
        generation=3,
        step_number=0,
        applied_through={"message_id": "m9", "created_at": AT - 5},
    ),
    ObservationStart(
        **CYCLE, started_at=AT, tokens_to_observe=31_000, thread_ids=["t1"], config=CONFIG
    ),
    ObservationEnd(
        **CYCLE,
        completed_at=AT + 900,
        duration_ms=900,
        tokens_observed=31_000,
        observation_tokens=1_200,
        observations="* 🔴 (14:30) User prefers tea",
        current_task="Plan the trip",
        extracted_values={"mood": "happy"},
        extraction_failures=[{"slug": "title", "error": "empty"}],
        message_ids=["m1", "m2"],
        range="m1:m2",
    ),
    ObservationFailed(
        **CYCLE,
        failed_at=AT + 50,
        duration_ms=50,
        tokens_attempted=31_000,
        error="rate limited",
        retrying=True,
    ),
    BufferingStart(
        **CYCLE, started_at=AT, tokens_to_buffer=6_000, config={**CONFIG, "activate_after_idle": "auto"}
    ),
    BufferingEnd(
        **CYCLE,
        completed_at=AT + 10,
        duration_ms=10,
        tokens_buffered=6_000,
        buffered_tokens=400,
        message_ids=["m1"],
        range="m1:m1",
    ),
    BufferingFailed(**CYCLE, failed_at=AT, duration_ms=0, tokens_attempted=6_000, error="timeout"),
    Activation(
        **CYCLE,
        activated_at=AT,
        chunks_activated=1,
        tokens_activated=6_000,
        observation_tokens=400,
        messages_activated=4,
        generation=0,
        config={**CONFIG, "activate_after_idle": 300_000},
        triggered_by="ttl",
        last_activity_at=AT - 400_000,
        ttl_expired_ms=100_000,
        message_ids=["m1", "m2", "m3", "m4"],
        range="m1:m4",
    ),
    ThreadUpdate(**RECORD, cycle_id="c1", old_title=None, new_title="Trip to Lisbon", timestamp=AT),
]


def sample_dead_letter() -> DeadLetter:
    return DeadLetter.from_failure(
        topic="om.messages.v1",
        partition=3,
        offset=42,
        key=b"thread:t1",
        value=b"\xff{not json",
        error=SchemaError("", "not valid JSON"),
        stage="decode",
        failed_at=AT,
    )


def sample_message() -> ChatMessage:
    return ChatMessage(
        id="m1",
        thread_id="t1",
        resource_id="u1",
        role="assistant",
        created_at=AT,
        parts=[
            TextPart(text="hello", created_at=AT),
            ToolInvocationPart(
                tool_call_id="c1", tool_name="search", state="result", args={"q": "x"}, result=[1]
            ),
            DataPart(type="data-om-activation", data={"cycleId": "c"}),
        ],
    )
