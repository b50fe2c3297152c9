"""The pipeline benchmarks' clock (bench/worker.py): a status event read off its JSON names the same
folded message as the event decoded and validated, and every other event names none; a failed cycle
read off its JSON is one the decoded event calls failed."""

from __future__ import annotations

from bench.worker import failed_cycle, folded_message
from processors.config import OMConfig
from processors.machine import decide
from schemas.lifecycle import decode_event
from streams.harness.echo_model import respond
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


def test_a_failed_cycle_read_off_the_json_is_the_decoded_events() -> None:
    config = OMConfig.model_validate({"observation": {"messageTokens": 200}})
    state, values = None, []
    for n in range(12):
        decision = decide(state, message(f"m{n}", T0 + n * 60_000, text=" ".join(["word"] * 120)), config)
        for job in decision.jobs:  # every model call fails: buffering-failed, observation-failed
            decision = decide(decision.state, respond(job, ok=False), config)
            values += [event.to_bytes() for event in decision.events]
        state = decision.state
    failed = [decode_event(value).type.endswith("-failed") for value in values]
    assert [failed_cycle(value) for value in values] == failed
    assert any(failed) and not all(failed)
