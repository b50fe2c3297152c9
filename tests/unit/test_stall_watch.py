"""The stall watch: a worker whose acknowledged offsets never reach the broker's commits is wedged."""

from __future__ import annotations

from streams.stall_watch import StallWatch

P, Q = ("messages", 0), ("results", 1)


def test_a_partition_committed_up_to_what_was_acked_is_never_stalled() -> None:
    watch = StallWatch(limit_s=10)
    watch.acked(P, 29)
    assert watch.check({P: 29}, now=0) == []
    assert watch.check({P: 29}, now=100) == []


def test_a_commit_that_never_comes_is_a_stall_after_the_limit() -> None:
    watch = StallWatch(limit_s=10)
    watch.acked(P, 29)
    assert watch.check({P: 18}, now=0) == []
    assert watch.check({P: 18}, now=9.9) == []
    [stall] = watch.check({P: 18}, now=10)
    assert (stall.partition, stall.acked, stall.committed, stall.seconds) == (P, 29, 18, 10)


def test_a_partition_never_committed_at_all_stalls_too() -> None:
    watch = StallWatch(limit_s=5)
    watch.acked(Q, 3)
    watch.check({}, now=0)
    [stall] = watch.check({}, now=6)
    assert stall.committed is None


def test_a_busy_worker_whose_commits_keep_moving_is_not_stalled() -> None:
    watch = StallWatch(limit_s=10)
    for second in range(0, 60, 4):
        watch.acked(P, 100 + second * 10)  # always ahead of the broker by a few batches
        assert watch.check({P: 100 + second * 10 - 5}, now=second) == [], second


def test_the_clock_restarts_when_the_commit_passes_the_offset_it_waited_for() -> None:
    watch = StallWatch(limit_s=10)
    watch.acked(P, 10)
    watch.check({P: 0}, now=0)
    watch.acked(P, 20)
    assert watch.check({P: 10}, now=8) == []  # moved past 10: waiting for 20 from now on
    assert watch.check({P: 10}, now=17) == []
    assert [s.acked for s in watch.check({P: 10}, now=18)] == [20]


def test_an_unreachable_broker_restarts_the_clock() -> None:
    watch = StallWatch(limit_s=10)
    watch.acked(P, 29)
    watch.check({P: 18}, now=0)
    watch.broker_unreachable()
    assert watch.check({P: 18}, now=30) == []  # the broker just came back: give it the full limit
    assert watch.check({P: 18}, now=39) == []
    assert len(watch.check({P: 18}, now=40)) == 1


def test_partitions_moved_away_in_a_rebalance_are_forgotten() -> None:
    watch = StallWatch(limit_s=10)
    watch.acked(P, 29)
    watch.acked(Q, 7)
    watch.check({}, now=0)
    watch.keep_only([Q])
    assert [s.partition for s in watch.check({}, now=20)] == [Q]


def test_acks_never_move_back() -> None:
    watch = StallWatch(limit_s=10)
    watch.acked(P, 29)
    watch.acked(P, 12)  # a re-delivered record after a rebalance
    assert watch.check({P: 29}, now=0) == []
