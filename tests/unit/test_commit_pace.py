"""When the worker commits (streams/commit_pace.py): at once when asked after a quiet interval, else
at most once per interval, and unasked only as a slow sweep."""

from __future__ import annotations

import asyncio

from streams.commit_pace import SWEEP_INTERVALS, CommitPace


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def _just_committed() -> tuple[Clock, CommitPace]:
    """A pace whose last commit took asked work 1/256 s ago (a busy worker's next batch is folded)."""
    clock = Clock()
    pace = CommitPace(0.125, clock)
    pace.ask()
    pace.committing()
    clock.now += 1 / 256
    return clock, pace


def test_asked_work_after_a_quiet_spell_commits_at_once() -> None:
    clock = Clock()
    pace = CommitPace(0.125, clock)
    pace.committing()  # the first sweep
    clock.now += 0.5
    assert not pace.due(), "nothing asked, no sweep due: no commit"
    pace.ask()
    assert pace.due()


def test_work_asked_right_after_a_commit_waits_for_the_interval() -> None:
    clock = Clock()
    pace = CommitPace(0.125, clock)
    pace.ask()
    pace.committing()
    pace.ask()
    clock.now += 0.125 - 1 / 256
    assert not pace.due()
    clock.now += 1 / 256
    assert pace.due()


def test_under_load_commits_come_once_per_interval() -> None:
    clock = Clock()
    pace = CommitPace(0.125, clock)  # binary fractions: exact sums
    commits = 0
    for _ in range(1_024):  # a batch every 1/256 s for 4 s
        clock.now += 1 / 256
        pace.ask()
        if pace.due():
            pace.committing()
            commits += 1
    assert commits == 32


def test_with_nothing_asked_a_sweep_commits_every_few_intervals() -> None:
    clock = Clock()
    pace = CommitPace(0.125, clock)
    pace.committing()
    clock.now += SWEEP_INTERVALS * 0.125 - 1 / 256
    assert not pace.due()
    clock.now += 1 / 256
    assert pace.due()


def test_the_committer_wakes_when_asked_not_at_its_tick() -> None:
    async def scenario() -> bool:
        pace = CommitPace(3_600.0)  # a tick an hour away
        waiter = asyncio.ensure_future(pace.asked())
        await asyncio.sleep(0)
        pace.ask()
        await asyncio.wait_for(waiter, 5)
        return pace.due()

    assert asyncio.run(scenario())


def test_a_drained_batch_commits_at_once_even_right_after_a_commit() -> None:
    _, pace = _just_committed()
    pace.ask(drained=False)
    assert not pace.due(), "input still waits behind the batch: wait for the interval"
    pace.ask(drained=True)
    assert pace.due(), "nothing waits behind the batch: commit now"
    pace.committing()
    pace.ask()
    assert not pace.due(), "the drained mark belongs to the commit that took it"


def test_a_busy_worker_that_drains_now_and_then_commits_for_each_drain() -> None:
    clock = Clock()
    pace = CommitPace(0.125, clock)
    commits = 0
    for n in range(1_024):  # a batch every 1/256 s for 4 s; every 16th finds the queue empty
        clock.now += 1 / 256
        pace.ask(drained=n % 16 == 15)
        if pace.due():
            pace.committing()
            commits += 1
    assert commits == 1 + 64  # the first batch (after quiet), then one per drain: the interval never passes between


def test_the_committer_sleeps_until_asked_work_is_due_not_a_tick_later() -> None:
    clock = Clock()
    pace = CommitPace(0.125, clock)
    assert pace.wake_in() == 0.0625, "nothing asked: the sweep's tick"
    pace.ask()
    pace.committing()
    clock.now += 0.03125
    pace.ask()
    assert pace.wake_in() == 0.125 - 0.03125
    clock.now += pace.wake_in()
    assert pace.due()
    clock.now += 1.0
    assert pace.wake_in() == 0.0, "overdue: at once"


def test_under_load_a_batch_someone_waits_on_commits_at_once() -> None:
    clock, pace = _just_committed()
    pace.ask()  # input still waiting behind it, nobody reading it: the interval holds
    assert not pace.due()
    pace.ask(awaited=True)  # a caller waits to read this batch's key
    assert pace.due()
    pace.committing()
    clock.now += 1 / 256
    pace.ask()
    assert not pace.due(), "the next batch nobody waits on waits for the interval again"
