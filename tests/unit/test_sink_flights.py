"""The sink's queue rules (streams/sink/flights.py): which started batches are written as one, and
how long the queue may gather before its write."""

from __future__ import annotations

from streams.sink.flights import Flight, gather_left, next_group
from streams.sink.writer import Prepared, _Start


def _flight(started: float, *, start: bool = True, recomputed: tuple = (), prepared: bool = True) -> Flight:
    begun = _Start([], list(recomputed), frozenset()) if start else None
    return Flight([], [], Prepared({}, begun, (), None) if prepared else None, started)


def test_the_started_batches_at_the_head_are_written_as_one_and_an_unstarted_one_alone() -> None:
    a, b, c, d = _flight(0), _flight(1), _flight(2, start=False), _flight(3)
    assert next_group([a, b, c, d]) == [a, b]
    assert next_group([c, d]) == [c]
    assert next_group([_flight(0, prepared=False), a]) == [_flight(0, prepared=False)]


def test_the_queue_gathers_until_its_oldest_batch_waited_gather_ms_unless_a_key_waits_on_a_recompute() -> None:
    queue = [_flight(10.0), _flight(10.05)]
    assert abs(gather_left(queue, 100, now=10.02) - 0.08) < 1e-9
    assert gather_left(queue, 100, now=10.2) < 0
    assert gather_left(queue, 0, now=10.02) == 0.0, "no gathering without gather_ms (om sink)"
    assert gather_left([*queue, _flight(10.06, recomputed=(("r", "k"),))], 100, now=10.02) == 0.0
    assert gather_left([*queue, _flight(10.06, start=False)], 100, now=10.02) == 0.0
    assert gather_left([], 100, now=10.02) == 0.0
