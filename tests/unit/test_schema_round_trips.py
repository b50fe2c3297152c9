"""Wire models survive bytes round trips, whatever the content."""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemas.base import MAX_EPOCH_MS, VersionedModel, decode
from schemas.control import decode_control
from schemas.dlq import DeadLetter
from schemas.lifecycle import decode_event
from schemas.messages import ChatMessage, DataPart, TextPart, ToolInvocationPart, ToolState
from tests.unit.schema_samples import (
    CONTROL_EVENTS,
    LIFECYCLE_EVENTS,
    sample_dead_letter,
    sample_message,
)


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
    letter = sample_dead_letter()
    wire = orjson.loads(letter.to_bytes())
    assert wire["value"] == base64.b64encode(b"\xff{not json").decode()
    assert wire["key"] == base64.b64encode(b"thread:t1").decode()
    assert decode(DeadLetter, letter.to_bytes()) == letter


def test_chat_message_round_trips_through_bytes() -> None:
    message = sample_message()
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


# --- property: ChatMessage survives any bytes round trip ---------------------------------------

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_ids = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40)  # schemas/keys.py
_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=12,
)
_timestamps = st.none() | st.integers(0, MAX_EPOCH_MS)
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
    message_id=_ids,
    thread_id=_ids,
    role=st.sampled_from(["user", "assistant", "system", "tool", "signal"]),
    created_at=st.integers(0, MAX_EPOCH_MS),
    parts=st.lists(_parts, max_size=5),
)
def test_chat_message_round_trip_property(
    message_id: str, thread_id: str, role: str, created_at: int, parts: list[Any]
) -> None:
    message = ChatMessage(
        id=message_id, thread_id=thread_id, role=role, created_at=created_at, parts=parts
    )
    assert decode(ChatMessage, message.to_bytes()) == message


@pytest.mark.parametrize("bad", ["t\r\nX-Injected: 1", "a\x00b", "tab\there", "x" * 1025])
def test_ids_with_control_characters_or_over_1024_characters_are_refused_at_the_schema(bad: str) -> None:
    """Issue 18, item 4: one rule for thread, resource and message ids, checked where a record is accepted."""
    from schemas.base import SchemaError, decode
    from schemas.control import TurnEnd

    for field in ("id", "thread_id", "resource_id"):
        raw = {"id": "m", "thread_id": "t", "resource_id": "r", "role": "user", "created_at": 1, field: bad}
        with pytest.raises(SchemaError, match=field):
            decode(ChatMessage, orjson.dumps(raw))
    with pytest.raises(SchemaError, match="thread_id"):
        decode(TurnEnd, orjson.dumps({"kind": "turn-end", "thread_id": bad, "at": 1}))
