"""An Observer call reads at most twice the threshold (60,000 tokens at least), oldest messages
first, and the cycles that follow take the rest (processors/machine/call_size.py): a burst that
outruns the Observer no longer makes one call of the whole window (a job over the broker's record
limit, failed and retried larger at every step)."""

from __future__ import annotations

from processors.config import OMConfig
from processors.machine.call_size import CALL_THRESHOLDS, MIN_CALL_TOKENS
from schemas.control import TurnEnd
from schemas.jobs import ObserveJob
from tests.unit.machine.core_driver import MINUTE, T0, Driver, message, words

THRESHOLD = 30_000  # Mastra's default: twice it is the floor too
CAP = CALL_THRESHOLDS * THRESHOLD
NO_BUFFERING = {"observation": {"buffer_tokens": False}}


def _burst(d: Driver, count: int, *, start: int = 0) -> None:
    """``count`` messages of ~660 tokens, none answered (the Observer lags behind them all)."""
    for i in range(start, start + count):
        d.feed(message(f"m{i}", T0 + i * MINUTE, role="user" if i % 2 == 0 else "assistant", text=words(600, f"m{i}")))


def _call_tokens(d: Driver, job: ObserveJob) -> int:
    return 24 + sum(d.state.message_tokens[m.id] for m in job.messages)


def _sync_jobs(d: Driver) -> list[ObserveJob]:
    return [j for j in d.jobs if isinstance(j, ObserveJob) and j.mode == "sync"]


def test_a_burst_is_observed_in_calls_of_at_most_twice_the_threshold_oldest_first() -> None:
    d = Driver(OMConfig.model_validate(NO_BUFFERING))
    _burst(d, 300)  # ~200,000 tokens behind one cycle
    (first,) = _sync_jobs(d)
    assert _call_tokens(d, first) >= THRESHOLD, "started at the threshold, within the cap: all it had"
    observed: list[str] = []
    calls = 0
    while _sync_jobs(d):
        (job,) = _sync_jobs(d)  # one synchronous cycle at a time
        assert _call_tokens(d, job) <= CAP
        oldest = [m.id for m in d.state.window if m.id not in observed][: len(job.messages)]
        assert [m.id for m in job.messages] == oldest, "the oldest unobserved messages, in order"
        observed += [m.id for m in job.messages]
        d.answer(job)
        calls += 1
    assert calls >= 3 and len(observed) == len(set(observed)), "several calls, no message twice"
    assert d.state.pending_tokens() < THRESHOLD, "the cycles went on until the window was below the threshold"
    assert [m.id for m in d.state.window] == [f"m{i}" for i in range(300) if f"m{i}" not in observed]
    assert not d.events("observation-failed")


def test_a_turn_by_turn_conversation_observes_all_it_has_at_the_threshold() -> None:
    d = Driver(OMConfig.model_validate(NO_BUFFERING))
    _burst(d, 60)
    (job,) = _sync_jobs(d)
    (issued,) = [decision for decision in d.decisions if job in decision.jobs]
    assert [m.id for m in job.messages] == [m.id for m in issued.state.window], "every message it had, in order"
    assert len(job.messages) < 60 and _call_tokens(d, job) <= CAP


def test_a_small_threshold_still_observes_a_burst_in_one_call_up_to_the_floor() -> None:
    d = Driver(OMConfig.model_validate({"observation": {"message_tokens": 300, "buffer_tokens": False}}))
    d.talk(1, answer=False)  # ~66 tokens: below the threshold
    d.talk(300, start=T0 + MINUTE, prefix="n", answer=False)  # the threshold crossed at once, then ~19,800 tokens
    first = _sync_jobs(d)[0]
    d.answer(first)
    (job,) = _sync_jobs(d)
    assert _call_tokens(d, job) > CALL_THRESHOLDS * 300 and _call_tokens(d, job) <= MIN_CALL_TOKENS
    assert {m.id for m in job.messages} == {m.id for m in d.state.window} - {m.id for m in first.messages}


def test_one_message_larger_than_the_cap_is_still_observed_alone() -> None:
    d = Driver(OMConfig.model_validate(NO_BUFFERING))
    _burst(d, 40)  # just below the threshold
    d.feed(message("huge", T0 + 50 * MINUTE, text=words(60_000, "h")))  # more than the cap on its own
    d.feed(message("next", T0 + 51 * MINUTE))
    (first,) = _sync_jobs(d)
    assert [m.id for m in first.messages] == [f"m{i}" for i in range(40)], "the cap leaves the huge one out"
    d.answer(first)
    (job,) = _sync_jobs(d)
    assert [m.id for m in job.messages] == ["huge"], "alone, over the cap, but a call reads at least one"
    d.answer(job)
    assert [m.id for m in d.state.window] == ["next"]


def test_a_buffering_cycle_at_a_turns_end_mid_burst_reads_at_most_twice_the_threshold() -> None:
    d = Driver(OMConfig.model_validate({"observation": {"buffer_on_idle": True}}))
    _burst(d, 400)  # a buffering cycle in flight from the first interval, the window far past the threshold
    (buffering,) = d.jobs
    d.answer(buffering)  # activated at the threshold; a synchronous cycle takes the oldest rest
    (sync,) = _sync_jobs(d)
    d.feed(TurnEnd(thread_id="t1", resource_id="r1", at=T0 + 500 * MINUTE))  # buffers on idle, not at an interval
    (idle,) = [j for j in d.jobs if j.mode == "buffer"]
    assert _call_tokens(d, idle) <= CAP
    waiting = [m.id for m in d.state.window if m.id not in {m.id for m in sync.messages}]
    assert [m.id for m in idle.messages] == waiting[: len(idle.messages)] and len(idle.messages) < len(waiting)
