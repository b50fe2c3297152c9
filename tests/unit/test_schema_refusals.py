"""Malformed wire data is refused naming the field, and dead letters keep the reason."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from schemas.base import SchemaError, VersionedModel, decode
from schemas.control import decode_control
from schemas.dlq import DeadLetter
from schemas.lifecycle import decode_event
from schemas.messages import ChatMessage
from tests.unit.schema_samples import (
    AT,
    CONTROL_EVENTS,
    LIFECYCLE_EVENTS,
    sample_dead_letter,
    sample_message,
)


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
        (lambda data: decode(DeadLetter, data), _wire(sample_dead_letter(), schema_version=0)),
        (lambda data: decode(ChatMessage, data), _wire(sample_message(), schema_version=7)),
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
    raw = _wire(sample_message())
    del raw["thread_id"]
    assert _field_of(lambda data: decode(ChatMessage, data), raw) == "thread_id"


def test_chat_message_bad_part_names_the_part_and_field() -> None:
    raw = _wire(sample_message(), parts=[{"type": "text"}])
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
