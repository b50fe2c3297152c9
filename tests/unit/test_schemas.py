"""Wire models: bytes round trips, Mastra's camelCase accepted, and readable refusals."""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemas.base import SchemaError, VersionedModel, decode
from schemas.control import (
    ConfigOverride,
    IdleTick,
    ProviderChange,
    ThreadDeleted,
    TurnEnd,
    TurnStart,
    decode_control,
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
    decode_event,
)
from schemas.messages import ChatMessage, DataPart, TextPart, ToolInvocationPart, ToolState

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


def _dead_letter() -> DeadLetter:
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


def _message() -> ChatMessage:
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


# --- round trips -------------------------------------------------------------------------------


@pytest.mark.parametrize("event", CONTROL_EVENTS, ids=lambda e: e.kind)
def test_control_event_round_trips_through_bytes(event: VersionedModel) -> None:
    decoded = decode_control(event.to_bytes())
    assert type(decoded) is type(event)
    assert decoded == event


@pytest.mark.parametrize("event", LIFECYCLE_EVENTS, ids=lambda e: e.type)
def test_lifecycle_event_round_trips_through_bytes(event: VersionedModel) -> None:
    decoded = decode_event(event.to_bytes())
    assert type(decoded) is type(event)
    assert decoded == event


def test_dead_letter_round_trips_raw_bytes_as_standard_base64() -> None:
    letter = _dead_letter()
    wire = orjson.loads(letter.to_bytes())
    assert wire["value"] == base64.b64encode(b"\xff{not json").decode()
    assert wire["key"] == base64.b64encode(b"thread:t1").decode()
    assert decode(DeadLetter, letter.to_bytes()) == letter


def test_chat_message_round_trips_through_bytes() -> None:
    message = _message()
    assert decode(ChatMessage, message.to_bytes()) == message


def test_part_type_is_mastras_data_part_name() -> None:
    assert [e.part_type for e in LIFECYCLE_EVENTS] == [
        "data-om-status",
        "data-om-observation-start",
        "data-om-observation-end",
        "data-om-observation-failed",
        "data-om-buffering-start",
        "data-om-buffering-end",
        "data-om-buffering-failed",
        "data-om-activation",
        "data-om-thread-update",
    ]


# --- Mastra's camelCase -------------------------------------------------------------------------


def test_control_accepts_camel_case_and_normalises_config_keys() -> None:
    raw = {
        "kind": "config-override",
        "threadId": "t1",
        "resourceId": "u1",
        "at": AT,
        "schemaVersion": 1,
        "config": {"observation": {"messageTokens": 5_000}, "reflection": {"observationTokens": 9_000}},
    }
    event = decode_control(orjson.dumps(raw))
    assert event == CONTROL_EVENTS[-1]
    assert event.config == {
        "observation": {"message_tokens": 5_000},
        "reflection": {"observation_tokens": 9_000},
    }


def test_lifecycle_accepts_mastras_camel_case_marker_data() -> None:
    raw = {
        "type": "activation",
        "key": "thread:t1",
        "threadId": "t1",
        "resourceId": "u1",
        "recordId": "r1",
        "at": AT,
        "cycleId": "buffer-obs-1",
        "operationType": "observation",
        "activatedAt": AT,
        "chunksActivated": 1,
        "tokensActivated": 6_000,
        "observationTokens": 400,
        "messagesActivated": 4,
        "generationCount": 2,
        "config": {
            "messageTokens": 30_000,
            "observationTokens": 40_000,
            "scope": "thread",
            "activateAfterIdle": "auto",
        },
        "triggeredBy": "provider_change",
        "previousModel": "openai/gpt-5",
        "currentModel": "anthropic/claude-sonnet-4-5",
        "messageIds": ["m1"],
    }
    event = decode_event(orjson.dumps(raw))
    assert isinstance(event, Activation)
    assert event.generation == 2
    assert event.config.activate_after_idle == "auto"
    assert event.message_ids == ["m1"] and event.range is None


def test_status_windows_accept_camel_case() -> None:
    raw = {
        "type": "status",
        **RECORD,
        "generation": 0,
        "windows": {
            **WINDOWS,
            "buffered": {
                "observations": {
                    "chunks": 0,
                    "messageTokens": 0,
                    "projectedMessageRemoval": 0,
                    "observationTokens": 0,
                    "status": "idle",
                },
                "reflection": {
                    "inputObservationTokens": 10,
                    "observationTokens": 5,
                    "status": "running",
                },
            },
        },
        "appliedThrough": {"messageId": "m3", "createdAt": AT},
    }
    event = decode_event(orjson.dumps(raw))
    assert isinstance(event, StatusEvent)
    assert event.windows.buffered.reflection.input_observation_tokens == 10
    assert event.applied_through is not None and event.applied_through.message_id == "m3"


def test_resource_scope_events_have_no_thread_id() -> None:
    raw = {**RECORD, "key": "resource:u1", "thread_id": None}
    event = decode_event(orjson.dumps({**raw, "type": "status", "windows": WINDOWS, "generation": 0}))
    assert event.thread_id is None


# --- refusals ---------------------------------------------------------------------------------


def _field_of(decoder: Any, raw: Any) -> str:
    with pytest.raises(SchemaError) as caught:
        decoder(raw if isinstance(raw, bytes) else orjson.dumps(raw))
    return caught.value.field


def _wire(model: VersionedModel, **changes: Any) -> dict[str, Any]:
    return {**model.to_json_dict(), **changes}


def _camel_version(raw: dict[str, Any], version: int) -> dict[str, Any]:
    return {**{k: v for k, v in raw.items() if k != "schema_version"}, "schemaVersion": version}


@pytest.mark.parametrize(
    ("decoder", "raw"),
    [
        (decode_control, _wire(CONTROL_EVENTS[0], schema_version=99)),
        (decode_event, _camel_version(_wire(LIFECYCLE_EVENTS[2]), 2)),
        (lambda data: decode(DeadLetter, data), _wire(_dead_letter(), schema_version=0)),
        (lambda data: decode(ChatMessage, data), _wire(_message(), schema_version=7)),
    ],
)
def test_unknown_schema_version_is_refused_naming_the_field(decoder: Any, raw: Any) -> None:
    assert _field_of(decoder, raw) == "schema_version"


OVERRIDE = {"kind": "config-override", "thread_id": "t1", "at": AT}


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"kind": "turn-end", "at": AT}, "thread_id"),
        ({"kind": "turn-start", "thread_id": "t1", "at": AT, "model": "gpt-5"}, "model"),
        ({"kind": "turn-end", "thread_id": "t1", "at": -1}, "at"),
        ({"kind": "idle-tick", "key": "t1", "at": AT}, "key"),
        ({**OVERRIDE, "config": {"observation": {"message_tokens": 0}}}, "config.observation.message_tokens"),
        ({**OVERRIDE, "config": {"reflection": {"observationTokens": "x"}}}, "config.reflection.observationTokens"),
        ({**OVERRIDE, "config": {"scope": "resource"}}, "config.scope"),
        ({"kind": "thread-renamed", "thread_id": "t1", "at": AT}, "kind"),
        ({"thread_id": "t1", "at": AT}, "kind"),
    ],
)
def test_invalid_control_event_names_the_field(raw: dict[str, Any], field: str) -> None:
    assert _field_of(decode_control, raw) == field


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        (_wire(LIFECYCLE_EVENTS[1], operation_type="summary"), "operation_type"),
        (_wire(LIFECYCLE_EVENTS[2], range="m1"), "range"),
        (_wire(LIFECYCLE_EVENTS[7], triggered_by="cron"), "triggered_by"),
        ({k: v for k, v in _wire(LIFECYCLE_EVENTS[0]).items() if k != "record_id"}, "record_id"),
        (_wire(LIFECYCLE_EVENTS[0], key="t1"), "key"),
        (_wire(LIFECYCLE_EVENTS[0], type="progress"), "type"),
    ],
)
def test_invalid_lifecycle_event_names_the_field(raw: dict[str, Any], field: str) -> None:
    assert _field_of(decode_event, raw) == field


def test_chat_message_missing_field_is_named() -> None:
    raw = _wire(_message())
    del raw["thread_id"]
    assert _field_of(lambda data: decode(ChatMessage, data), raw) == "thread_id"


def test_chat_message_bad_part_names_the_part_and_field() -> None:
    raw = _wire(_message(), parts=[{"type": "text"}])
    field = _field_of(lambda data: decode(ChatMessage, data), raw)
    assert field.startswith("parts.0.") and field.endswith("text")


@pytest.mark.parametrize("decoder", [decode_control, decode_event])
@pytest.mark.parametrize(
    ("raw", "reason"), [(b"{not json", "not valid JSON"), (b"[1, 2]", "JSON object")]
)
def test_bad_json_and_non_objects_are_refused(decoder: Any, raw: bytes, reason: str) -> None:
    with pytest.raises(SchemaError) as caught:
        decoder(raw)
    assert caught.value.field == ""
    assert reason in str(caught.value)


# --- dead letters -------------------------------------------------------------------------------


def test_dead_letter_keeps_the_schema_errors_field() -> None:
    error = SchemaError("parts.0.text", "Field required")
    letter = DeadLetter.from_failure(
        topic="om.messages.v1", partition=0, offset=1, key=None, value=b"{}",
        error=error, stage="validate", failed_at=AT,
    )
    assert letter.field == "parts.0.text"
    assert letter.error == "parts.0.text: Field required"
    assert "key" not in orjson.loads(letter.to_bytes())


def test_dead_letter_from_a_fold_error_has_no_field_but_a_readable_reason() -> None:
    letter = DeadLetter.from_failure(
        topic="om.results.v1", partition=1, offset=9, key=b"thread:t1", value=b"{}",
        error=KeyError("cycle"), stage="apply", failed_at=AT,
    )
    assert letter.field is None
    assert letter.error == "'cycle'"
    bare = DeadLetter.from_failure(
        topic="t", partition=0, offset=0, key=None, value=None,
        error=RuntimeError(), stage="apply", failed_at=AT,
    )
    assert bare.error == "RuntimeError"


# --- property: ChatMessage survives any bytes round trip ---------------------------------------

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=12,
)
_timestamps = st.none() | st.integers(0, 2**53)
_parts = st.one_of(
    st.builds(TextPart, text=_text, created_at=_timestamps),
    st.builds(
        ToolInvocationPart,
        tool_call_id=_text.filter(bool),
        tool_name=_text.filter(bool),
        state=st.sampled_from(ToolState.__args__),
        args=_json,
        result=_json,
        created_at=_timestamps,
    ),
    st.builds(DataPart, type=st.from_regex(r"\Adata-[a-z-]{1,20}\Z"), data=_json),
)


@given(
    message_id=_text.filter(bool),
    thread_id=_text.filter(bool),
    role=st.sampled_from(["user", "assistant", "system", "tool", "signal"]),
    created_at=st.integers(0, 2**53),
    parts=st.lists(_parts, max_size=5),
)
def test_chat_message_round_trip_property(
    message_id: str, thread_id: str, role: str, created_at: int, parts: list[Any]
) -> None:
    message = ChatMessage(
        id=message_id, thread_id=thread_id, role=role, created_at=created_at, parts=parts
    )
    assert decode(ChatMessage, message.to_bytes()) == message
