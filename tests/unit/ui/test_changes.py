"""streams/ui/changes.py: each observation, activation and reflection as a diff of the log."""

from __future__ import annotations

from schemas.lifecycle import Activation, BufferingEnd, MarkerConfig, ObservationEnd
from streams.ui.changes import build, diff, reflection_generation

BASE = {"key": "thread:t", "thread_id": "t", "resource_id": "r", "record_id": "rec", "at": 1_000}
CONFIG = MarkerConfig(message_tokens=300, observation_tokens=800, scope="thread")
OLD = "Date: Nov 27\n* 🔴 (09:02) Maya plans a trip\n* 🟡 (09:03) hotel in Chiado\n* 🟡 (10:00) ferry times\n* 🔴 (11:00) Tomás allergic"


def end(operation: str, observations: str, **extra) -> ObservationEnd:
    return ObservationEnd(**BASE, cycle_id="c1", operation_type=operation, completed_at=2_000, duration_ms=150,
                          tokens_observed=500, observation_tokens=120, observations=observations, **extra)


def activation(operation: str, generation: int, **extra) -> Activation:
    return Activation(**BASE, cycle_id="c2", operation_type=operation, activated_at=3_000, chunks_activated=1,
                      tokens_activated=80, observation_tokens=60, messages_activated=2, generation=generation,
                      config=CONFIG, **extra)


def test_an_observation_adds_exactly_the_lines_it_carries_and_names_its_messages() -> None:
    change = build(end("observation", "Date: Nov 28\n\n* 🟡 (12:00) new fact", message_ids=["m1", "m2"],
                       range="m1:m2"), [], {}, None)
    assert change.kind == "observation"
    assert change.lines == [("+", "Date: Nov 28"), ("+", "* 🟡 (12:00) new fact")]
    assert (change.added, change.removed, change.message_ids) == (2, 0, ["m1", "m2"])
    assert change.model_call is change.event


def test_an_activation_reports_the_buffering_call_behind_it() -> None:
    buffered = BufferingEnd(**BASE, cycle_id="c2", operation_type="observation", completed_at=2_500, duration_ms=900,
                            tokens_buffered=80, buffered_tokens=60, observations="* x")
    other = BufferingEnd(**{**BASE, "at": 5}, cycle_id="other", operation_type="observation", completed_at=1,
                         duration_ms=1, tokens_buffered=1, buffered_tokens=1)
    change = build(activation("observation", 0, observations="* 🟢 (13:00) chunk line", message_ids=["m3"]),
                   [other, buffered], {}, None)
    assert change.kind == "activation"
    assert change.lines == [("+", "* 🟢 (13:00) chunk line")]
    assert change.model_call is buffered and change.cycle_events == [buffered]


def test_a_synchronous_reflection_is_diffed_against_the_previous_generation() -> None:
    new = "Date: Nov 27\n* 🔴 (09:02) Maya plans a trip\n* 🔴 (11:00) Tomás allergic\n* 🟡 summary of hotels"
    change = build(end("reflection", new), [], {0: OLD, 1: new + "\n* later line"}, 1)
    assert change.kind == "reflection" and change.generation == 1 and not change.approximate
    assert [line for op, line in change.lines if op == "-"] == ["* 🟡 (09:03) hotel in Chiado", "* 🟡 (10:00) ferry times"]
    assert [line for op, line in change.lines if op == "+"] == ["* 🟡 summary of hotels"]
    assert ("+", "* later line") not in change.lines  # added after the reflection, not by it


def test_an_activated_reflection_keeps_the_unreflected_tail_and_says_it_is_inferred() -> None:
    reflection = "Date: Nov 27\n* 🔴 (09:02) Maya plans a trip"
    buffered = BufferingEnd(**BASE, cycle_id="c2", operation_type="reflection", completed_at=2_500, duration_ms=700,
                            tokens_buffered=400, buffered_tokens=30, observations=reflection)
    head = reflection + "\n* 🔴 (11:00) Tomás allergic\n* newer"
    change = build(activation("reflection", 2), [buffered], {1: OLD, 2: head}, 2)
    assert change.approximate and change.generation == 2
    removed = [line for op, line in change.lines if op == "-"]
    assert removed == ["* 🟡 (09:03) hotel in Chiado", "* 🟡 (10:00) ferry times"]
    assert ("-", "* 🔴 (11:00) Tomás allergic") not in change.lines  # the tail stays verbatim


def test_a_reflection_without_the_previous_generation_shows_no_removals() -> None:
    change = build(end("reflection", "* only"), [], {}, 3)
    assert change.missing_before and change.lines == [("+", "* only")]


def test_the_generation_of_a_reflection() -> None:
    assert reflection_generation(activation("reflection", 4), None) == 4
    assert reflection_generation(end("reflection", "x"), 2) == 2


def test_diff_keeps_order_and_places_removals_where_they_stood() -> None:
    assert diff("a\nb\nc", "a\nx\nc") == [(" ", "a"), ("-", "b"), ("+", "x"), (" ", "c")]
    assert diff("", "a") == [("+", "a")]
