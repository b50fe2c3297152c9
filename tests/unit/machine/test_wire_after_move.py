"""Stored states and events written before ``processors/`` became rooms still decode, byte for byte.

``fixtures/pre_move_payloads.json`` was recorded at commit bacca18 (the flat layout) by running the
core over 40 messages with small thresholds and answering every job with the echo model: key states
(mid-run with a cycle in flight, and final), one lifecycle event, delta, job and result of each kind.
Decoding each with today's code and encoding it again must give the same bytes — for a key state,
the same fields with the same values plus only the fields added since, at their defaults: the
changelog and the topics written by an older worker are read by a newer one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from processors.machine import KeyState
from schemas.deltas import decode_delta
from schemas.jobs import decode_job, decode_result
from schemas.lifecycle import decode_event

PAYLOADS = json.loads((Path(__file__).parent / "fixtures" / "pre_move_payloads.json").read_text("utf-8"))
DECODERS = {
    "states": lambda raw: KeyState.from_obj(json.loads(raw)),
    "events": decode_event,
    "deltas": decode_delta,
    "jobs": decode_job,
    "results": decode_result,
}
ADDED_SINCE = {"states": {"step_pending_tokens": None, "deferred_step": False,
                          "observer_failures": 0, "observer_latched_until": None}}
CASES = [(kind, raw) for kind, items in PAYLOADS.items() for raw in items]


def test_the_recording_covers_every_kind() -> None:
    assert {kind for kind, _ in CASES} == set(DECODERS)
    assert len(PAYLOADS["states"]) >= 2


@pytest.mark.parametrize(("kind", "raw"), CASES, ids=[f"{k}-{i}" for i, (k, _) in enumerate(CASES)])
def test_recorded_payload_decodes_and_encodes_to_the_same_bytes(kind: str, raw: str) -> None:
    decoded = DECODERS[kind](raw)
    original, encoded = json.loads(raw), json.loads(decoded.to_bytes())
    added = ADDED_SINCE.get(kind, {})
    assert {k: v for k, v in encoded.items() if k not in added} == original
    assert {k: encoded[k] for k in added if k in encoded} == {k: v for k, v in added.items() if k in encoded}
    if not added:
        assert decoded.to_bytes() == raw.encode()
