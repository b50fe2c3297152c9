"""streams/harness/lifecycle_invariants.py: each rule caught on a crafted sequence, and none broken
by the core itself on the seeded corpus the two-worker pipeline test runs."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from processors.config import OMConfig
from streams.harness.lifecycle_invariants import violations
from tests.integration.pipeline import expected_run, seeded_conversation

SENT = {"m1", "m2", "m3", "m4"}


def _e(kind: str, cycle: str = "", ids: tuple[str, ...] = (), operation: str = "observation") -> SimpleNamespace:
    return SimpleNamespace(type=kind, cycle_id=cycle, operation_type=operation, message_ids=ids)


def test_a_buffering_cycle_may_end_silently_a_synchronous_one_may_not() -> None:
    assert violations([_e("buffering-start", "b1")], SENT) == []
    assert violations([_e("observation-start", "o1", operation="reflection")], SENT) == [
        "observation-start o1 (reflection) never ended"]


def test_a_clean_buffer_activate_observe_sequence_has_no_violation() -> None:
    events = [_e("buffering-start", "b1"), _e("buffering-end", "b1", ("m1", "m2")), _e("activation", "b1", ("m2", "m1")),
              _e("observation-start", "o1"), _e("observation-end", "o1", ("m3",)),
              _e("observation-start", "r1", operation="reflection"), _e("observation-end", "r1", operation="reflection")]
    assert violations(events, SENT) == []


@pytest.mark.parametrize(("events", "expected"), [
    ([_e("observation-start", "o1")], "observation-start o1 (observation) never ended"),
    ([_e("observation-end", "o1", ("m1",))], "observation-end o1 (observation) without its start"),
    ([_e("buffering-start", "b1"), _e("buffering-end", "b1"), _e("buffering-failed", "b1")],
     "buffering-failed b1 (observation) ended twice"),
    ([_e("observation-start", "o1"), _e("observation-start", "o1"), _e("observation-end", "o1")],
     "observation-start o1 (observation) started twice"),
    ([_e("activation", "b9", ("m1",))], "activation of b9, which never finished buffering"),
    ([_e("buffering-start", "b1"), _e("buffering-failed", "b1"), _e("activation", "b1")],
     "activation of b1, which never finished buffering"),
    ([_e("buffering-start", "b1"), _e("buffering-end", "b1", ("m1",)), _e("activation", "b1", ("m1",)),
      _e("activation", "b1", ("m1",))], "activation of b1 a second time"),
    ([_e("buffering-start", "b1"), _e("buffering-end", "b1", ("m1", "m2")), _e("activation", "b1", ("m1",))],
     "activation of b1 covers other messages than it buffered"),
    ([_e("buffering-start", "b1"), _e("buffering-end", "b1", ("m1",)), _e("activation", "b1", ("m1",)),
      _e("observation-start", "o1"), _e("observation-end", "o1", ("m1", "m2"))], "m1 observed twice: by b1 and by o1"),
    ([_e("observation-start", "o1"), _e("observation-end", "o1", ("x9",))],
     "observation-end o1 covers x9, never sent on this key"),
])
def test_each_rule_is_caught(events: list, expected: str) -> None:
    assert expected in violations(events, SENT)


async def test_the_core_breaks_none_on_the_seeded_corpus() -> None:
    config = OMConfig.model_validate({"model": "om-deterministic/observer", "observation": {"messageTokens": 600},
                                      "reflection": {"observationTokens": 500}})
    messages = seeded_conversation(range(8))  # the pipeline test runs 24 through two workers
    expected = await expected_run(messages, config)
    sent: dict[str, set[str]] = {}
    for m in messages:
        sent.setdefault(f"thread:{m.thread_id}", set()).add(m.id)
    found = {key: violations(events, sent[key]) for key, events in expected.lifecycle.items()}
    assert {key: v for key, v in found.items() if v} == {}
    kinds = {e.type for events in expected.lifecycle.values() for e in events}
    assert {"buffering-end", "activation", "observation-end"} <= kinds, "the corpus exercises each rule"
