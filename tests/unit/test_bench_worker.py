"""The pipeline benchmarks' clock (bench/worker.py): a status event read off its JSON names the same
folded message as the event decoded and validated, and every other event names none."""

from __future__ import annotations

from bench.worker import folded_message
from processors.config import OMConfig
from processors.machine import decide
from schemas.lifecycle import decode_event
from tests.unit.machine.core_driver import T0, message


def _events() -> list[bytes]:
    config = OMConfig.model_validate({"observation": {"messageTokens": 200}})
    state, out = None, []
    for n in range(12):
        decision = decide(state, message(f"m{n}", T0 + n * 60_000, text=" ".join(["word"] * 120)), config)
        state = decision.state
        out += [event.to_bytes() for event in decision.events]
    return out


def test_the_folded_message_read_off_the_json_is_the_decoded_events() -> None:
    events = _events()
    named = 0
    for value in events:
        event = decode_event(value)
        through = event.applied_through if event.type == "status" else None
        expected = through.message_id if through else None
        assert folded_message(value) == expected
        named += expected is not None
    assert named >= 12 and len(events) > named, "statuses of every message, and other events"
