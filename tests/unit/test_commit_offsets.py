"""streams/commit_offsets.py: a commit never passes a record a stream took and has not acknowledged,
and a slow job holds back only its own offset."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from faust.transport.consumer import Consumer as FaustConsumer
from faust.types import TP
from intervaltree import IntervalTree

from streams.commit_offsets import committable, install

JOBS = TP("jobs", 0)


@dataclass(eq=False)
class Taken:
    tp: TP
    offset: int
    acked: bool = False


class Consumer:
    """The parts of Faust's consumer the rule reads, kept as Faust keeps them."""

    def __init__(self, committed: int | None, acked: list[int], taken: list[int],
                 gaps: tuple[tuple[int, int], ...] = ()) -> None:
        self._committed_offset: dict[TP, int | None] = defaultdict(lambda: None, {JOBS: committed})
        self._acked: dict[TP, list[int]] = defaultdict(list, {JOBS: list(acked)})
        self._acked_index: dict[TP, set[int]] = defaultdict(set, {JOBS: set(acked)})
        self._gap: dict[TP, IntervalTree] = defaultdict(IntervalTree, {JOBS: IntervalTree.from_tuples(gaps)})
        self._unacked_messages = {Taken(JOBS, o) for o in taken} | {Taken(TP("messages", 0), 0)}

    def ack(self, offset: int) -> None:
        next(m for m in self._unacked_messages if m.tp == JOBS and m.offset == offset).acked = True
        self._acked[JOBS].append(offset)
        self._acked_index[JOBS].add(offset)


def test_fausts_own_rule_commits_past_a_job_still_running() -> None:
    """The defect: 12 acknowledged, 11 a marker, 10 still calling its model."""
    assert FaustConsumer._new_offset(Consumer(committed=10, acked=[12], taken=[10], gaps=((11, 12),)), JOBS) == 13
    assert FaustConsumer._new_offset(Consumer(committed=None, acked=[2, 4], taken=[0]), JOBS) == 3


def test_a_later_job_finishing_first_commits_its_result_at_the_earlier_jobs_offset() -> None:
    consumer = Consumer(committed=10, acked=[12], taken=[10], gaps=((11, 12),))
    held: dict = {}
    assert committable(consumer, [JOBS], held) == {JOBS: 10}, "the result commits; the offset stays"
    assert consumer._acked[JOBS] == [12], "the acknowledgement waits for the earlier job"
    assert committable(consumer, [JOBS], held) == {}, "nothing new behind the held offset: no commit"
    consumer._unacked_messages.add(Taken(JOBS, 14))
    consumer.ack(14)
    assert committable(consumer, [JOBS], held) == {JOBS: 10}, "a new result behind it commits too"


def test_on_a_fresh_partition_too() -> None:
    assert committable(Consumer(committed=None, acked=[2, 4], taken=[0]), [JOBS], {}) == {JOBS: 0}


def test_the_commit_stops_at_the_first_job_still_running() -> None:
    consumer = Consumer(committed=10, acked=[10, 12, 16], taken=[14])
    assert committable(consumer, [JOBS], {}) == {JOBS: 14}
    assert consumer._acked[JOBS] == [16] and consumer._acked_index[JOBS] == {16}


def test_once_the_earlier_job_ends_everything_acknowledged_commits() -> None:
    consumer = Consumer(committed=10, acked=[12], taken=[10], gaps=((11, 12), (13, 14)))
    held: dict = {}
    committable(consumer, [JOBS], held)
    consumer.ack(10)
    assert committable(consumer, [JOBS], held) == {JOBS: 13}
    assert consumer._acked[JOBS] == [] and not consumer._gap[JOBS].overlaps(0, 13)


def test_nothing_acknowledged_commits_nothing() -> None:
    assert committable(Consumer(committed=10, acked=[], taken=[11]), [JOBS], {}) == {}


def test_install_replaces_fausts_rule_on_the_consumer() -> None:
    consumer = Consumer(committed=10, acked=[12], taken=[10], gaps=((11, 12),))
    install(consumer)
    assert consumer._filter_committable_offsets([JOBS]) == {JOBS: 10}  # type: ignore[attr-defined]


def test_a_record_a_stream_skipped_unread_is_not_acknowledged() -> None:
    """Faust's stream acks what it skips while the flow is off for a rebalance (or from the last
    generation); recorded, that ack let the next commit pass a record nobody processed."""
    recorded: list[int] = []

    class Topics:
        def acks_enabled_for(self, topic: str) -> bool:
            return True

    class App:
        topics = Topics()

    consumer = Consumer(committed=10, acked=[], taken=[])
    consumer.app = App()  # type: ignore[attr-defined]
    consumer.ack = lambda message: recorded.append(message.offset) or True  # type: ignore[attr-defined]
    install(consumer)

    @dataclass
    class Message:
        offset: int
        tracked: bool
        topic: str = "jobs"
        partition: int = 0

    assert consumer.ack(Message(10, tracked=False)) is False  # type: ignore[attr-defined]
    assert consumer.ack(Message(11, tracked=True)) is True  # type: ignore[attr-defined]
    assert recorded == [11]
