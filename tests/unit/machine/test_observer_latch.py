"""processors/machine/observer_latch.py: a failing Observer is latched, retried after a while, and
lifted by progress or by a config-override; nothing is lost meanwhile."""

from processors.config import OMConfig
from schemas.control import ConfigOverride
from tests.unit.machine.core_driver import MINUTE, T0, Driver, message

RETRY_MS = 30 * MINUTE


def config(**observation: object) -> OMConfig:
    return OMConfig.model_validate({"observation": {"message_tokens": 3000, "max_failed_cycles": 3,
                                                    "latch_retry_ms": RETRY_MS, **observation}})


def fail_every_job(d: Driver) -> int:
    failed = 0
    while d.jobs:
        d.answer(d.jobs[0], ok=False)
        failed += 1
    return failed


def fail_until_latched(d: Driver) -> tuple[int, int, int]:
    """Messages a minute apart, every Observer job failed, until the latch engages: (next time,
    next message number, jobs failed)."""
    at, failed, i = T0, 0, 0
    while not d.events("observation-latched"):
        d.feed(message(f"m{i}", at))
        failed += fail_every_job(d)
        at, i = at + MINUTE, i + 1
        assert i < 200, "the latch never engaged"
    return at, i, failed


def test_three_failed_cycles_latch_the_observer_until_the_retry_and_a_success_lifts_it() -> None:
    d = Driver(config(buffer_tokens=False))
    at, i, failed = fail_until_latched(d)
    (latched,) = d.events("observation-latched")
    assert failed == 3 and latched.failures == 3 and latched.retry_at == at - MINUTE + RETRY_MS
    assert latched.error

    window_before = len(d.state.window)
    for _ in range(10):  # within the retry time: no cycle, every message kept
        d.feed(message(f"m{i}", at))
        assert not d.jobs, "a latched Observer started a cycle"
        at, i = at + MINUTE, i + 1
    assert len(d.state.window) == window_before + 10
    assert len(d.events("observation-failed")) == 3

    d.feed(message(f"m{i}", latched.retry_at + 1))  # the retry is due: one cycle tries
    assert len(d.jobs) == 1
    d.answer_all()
    assert d.state.observer_failures == 0 and d.state.observer_latched_until is None
    assert len(d.state.window) < window_before, "the successful retry observed the waiting messages"


def test_a_failed_retry_latches_again_with_another_event() -> None:
    d = Driver(config(buffer_tokens=False))
    at, _, _ = fail_until_latched(d)
    retry_at = d.events("observation-latched")[0].retry_at
    d.feed(message("late-try", retry_at + 1))
    assert fail_every_job(d) == 1
    second = d.events("observation-latched")[1]
    assert second.failures == 4 and second.retry_at == retry_at + 1 + RETRY_MS


def test_a_config_override_lifts_the_latch_at_once() -> None:
    d = Driver(config(buffer_tokens=False))
    at, _, _ = fail_until_latched(d)
    d.feed(ConfigOverride(thread_id="t1", resource_id="r1", at=at, config={"observation": {"message_tokens": 3000}}))
    d.feed(message("after-resume", at + 1))
    assert d.jobs, "the operator's resume did not let the Observer try again"


def test_failing_buffering_cycles_latch_too_and_zero_never_latches() -> None:
    d = Driver(config(latch_retry_ms=24 * 60 * MINUTE))
    for i in range(60):
        d.feed(message(f"m{i}", T0 + i * MINUTE))
        fail_every_job(d)
    assert len(d.events("buffering-failed")) == 3 and len(d.events("observation-latched")) == 1
    assert not d.events("observation-failed"), "a latched Observer must not fall back to synchronous cycles"

    mastra = Driver(config(buffer_tokens=False, max_failed_cycles=0))
    for i in range(60):
        mastra.feed(message(f"m{i}", T0 + i * MINUTE))
        fail_every_job(mastra)
    assert not mastra.events("observation-latched")
    assert len(mastra.events("observation-failed")) > 3, "Mastra's way: a retry at every step"
