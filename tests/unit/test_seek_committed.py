"""streams/seek_committed.py: no assigned partition keeps a fetch position past records it dropped."""

from __future__ import annotations

from aiokafka import TopicPartition

from streams.fetch_wait import _ConsumerThread
from streams.seek_committed import SeekEveryPartition, seek_every_partition

A, B, C = (TopicPartition("jobs", p) for p in range(3))


class AIOKafkaConsumer:
    """aiokafka's rule: ``seek_to_committed`` seeks only partitions committed above 0."""

    def __init__(self, committed: dict) -> None:
        self.committed, self.position = committed, {tp: 9 for tp in committed}  # 9: moved past dropped records

    async def seek_to_committed(self) -> dict:
        for tp, offset in self.committed.items():
            if offset and offset > 0:
                self.position[tp] = offset
        return dict(self.committed)

    async def seek_to_beginning(self, *tps: TopicPartition) -> None:
        for tp in tps:
            self.position[tp] = 0


async def test_partitions_never_committed_are_read_again_from_their_start() -> None:
    consumer = AIOKafkaConsumer({A: 5, B: None, C: 0})
    assert await seek_every_partition(consumer) == {A: 5, B: None, C: 0}
    assert consumer.position == {A: 5, B: 0, C: 0}


def test_the_workers_consumer_thread_carries_the_rule() -> None:
    assert issubclass(_ConsumerThread, SeekEveryPartition)
    assert _ConsumerThread.seek_to_committed is SeekEveryPartition.seek_to_committed
