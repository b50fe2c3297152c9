"""processors/machine/budget.py: over its resource's daily token budget a key starts no model cycle,
loses nothing, and starts what waited as soon as the budget allows again."""

from processors.config import OMConfig
from schemas.control import BudgetChange
from tests.unit.machine.core_driver import MINUTE, T0, Driver, message


def config(**top: object) -> OMConfig:
    return OMConfig.model_validate({"observation": {"message_tokens": 1000, "buffer_tokens": 300},
                                    "reflection": {"observation_tokens": 800}, "daily_token_budget": 5000, **top})


def notice(exceeded: bool, *, resource: str = "r1", at: int = T0, used: int = 6000) -> BudgetChange:
    return BudgetChange(key="thread:t1", resource_id=resource, at=at, exceeded=exceeded, day="2024-11-30",
                        used_tokens=used, limit_tokens=5000)


def test_over_budget_no_cycle_of_any_kind_starts_and_every_message_is_kept() -> None:
    d = Driver(config())
    d.talk(6)  # some cycles ran: observations, buffering
    assert d.events("observation-end") or d.events("buffering-end")
    d.feed(notice(True))
    (exceeded,) = d.events("budget-exceeded")
    assert (exceeded.day, exceeded.used_tokens, exceeded.limit_tokens) == ("2024-11-30", 6000, 5000)
    started = len(d.events("observation-start")) + len(d.events("buffering-start"))
    for i in range(40):  # far past every threshold: observation, buffering, reflection
        d.feed(message(f"late{i}", T0 + (10 + i) * MINUTE))
        assert not d.jobs, "a cycle started over budget"
    waiting = {m.id for m in d.state.window}  # (chunks buffered before may activate: no model needed)
    assert {f"late{i}" for i in range(40)} <= waiting, "a message was lost"
    assert len(d.events("observation-start")) + len(d.events("buffering-start")) == started
    d.feed(notice(True))
    assert len(d.events("budget-exceeded")) == 1, "a repeated notice emits nothing"


def test_a_cycle_in_flight_when_the_budget_runs_out_is_still_applied() -> None:
    d = Driver(config(observation={"message_tokens": 1000, "buffer_tokens": False}))
    for i in range(40):
        d.feed(message(f"m{i}", T0 + i * MINUTE))
        if d.jobs:
            break
    (job,) = d.jobs
    d.feed(notice(True))
    d.answer(job)
    assert d.events("observation-end"), "the in-flight observation was dropped"
    assert not d.jobs


def test_allowed_again_the_key_starts_what_waited_at_once() -> None:
    d = Driver(config(observation={"message_tokens": 1000, "buffer_tokens": False}))
    d.feed(message("m0", T0))
    d.feed(notice(True, used=5000))
    for i in range(1, 30):
        d.feed(message(f"m{i}", T0 + i * MINUTE))
    assert not d.jobs and not d.events("observation-start")
    clock = d.state.clock
    d.feed(notice(False, at=T0 + 365 * 24 * 60 * MINUTE, used=0))
    (restored,) = d.events("budget-restored")
    assert restored.used_tokens == 0
    assert d.jobs and d.events("observation-start"), "the waiting observation did not start"
    assert d.state.clock == clock, "the sink's clock moved the key's event time"
    d.feed(notice(False))
    assert len(d.events("budget-restored")) == 1


def test_another_resources_notice_changes_nothing() -> None:
    d = Driver(config(observation={"message_tokens": 1000, "buffer_tokens": False}))
    d.feed(message("m0", T0))
    before = d.state
    d.feed(notice(True, resource="r2"))
    assert not d.events("budget-exceeded") and d.state.budget_exceeded_day is None
    assert d.state.record == before.record


def test_a_notice_for_a_key_without_state_creates_none() -> None:
    d = Driver(config())
    decision = d.feed(notice(True))
    assert decision.state is None and not decision.events

