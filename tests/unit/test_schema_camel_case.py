"""Mastra's camelCase payloads are accepted and normalised."""

from __future__ import annotations

import orjson

from schemas.control import decode_control
from schemas.lifecycle import Activation, StatusEvent, decode_event
from tests.unit.schema_samples import AT, CONTROL_EVENTS, RECORD, WINDOWS


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
