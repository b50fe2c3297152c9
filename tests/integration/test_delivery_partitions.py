"""Issue 19: the SDK's closed batches (a call alone, no linger) land where ``send`` would put them.

Against the real broker: a call alone and two concurrent calls (the second joins the open batches)
each land every record once, each key's records in order, on the partition the producer's own
``send`` picks for that key (the Java client's murmur2 rule, which the worker's assignment follows).
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable, Callable

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from streams.sdk.delivery import Delivery

pytestmark = pytest.mark.integration

PARTITIONS = 12
KEYS = [f"thread:t{n}:r{n % 3}".encode() for n in range(30)]


async def _partitions_send_picks(bootstrap: str, topic: str) -> dict[bytes, int]:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        futures = {key: await producer.send(topic, b"probe", key=key) for key in KEYS}
        return {key: (await future).partition for key, future in futures.items()}
    finally:
        await producer.stop()


async def _landed(bootstrap: str, topic: str, count: int) -> dict[bytes, list[tuple[int, bytes]]]:
    """Each key's ``(partition, value)`` in log order, once ``count`` records were read."""
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                                enable_auto_commit=False)
    await consumer.start()
    by_key: dict[bytes, list[tuple[int, bytes]]] = collections.defaultdict(list)
    try:
        read = 0
        async with asyncio.timeout(30):
            while read < count:
                for records in (await consumer.getmany(timeout_ms=500)).values():
                    for record in records:
                        by_key[record.key].append((record.partition, record.value))
                        read += 1
    finally:
        await consumer.stop()
    return by_key


async def test_closed_and_open_batches_land_once_in_order_on_the_partition_send_picks(
        kafka_bootstrap: str, new_topic: Callable[..., Awaitable[str]]) -> None:
    topic = await new_topic(partitions=PARTITIONS)
    alone = [(key, f"alone-{n}-{key.decode()}".encode()) for n in range(3) for key in KEYS]
    first = [(key, f"first-{n}-{key.decode()}".encode()) for n in range(2) for key in KEYS]
    second = [(key, f"second-{n}-{key.decode()}".encode()) for n in range(2) for key in KEYS]
    delivery = Delivery(kafka_bootstrap, 60)
    try:
        await delivery.deliver(topic, alone)
        await asyncio.gather(delivery.deliver(topic, first), delivery.deliver(topic, second))
    finally:
        await delivery.close()
    picks = await _partitions_send_picks(kafka_bootstrap, topic)
    landed = await _landed(kafka_bootstrap, topic, len(alone) + len(first) + len(second) + len(KEYS))

    assert len(set(picks.values())) > PARTITIONS // 2
    for key in KEYS:
        partitions = {partition for partition, _ in landed[key]}
        assert partitions == {picks[key]}, key
        values = [value for _, value in landed[key] if value != b"probe"]
        mine = [value for k, value in alone if k == key]
        assert values[:3] == mine  # the call alone, in its order, before the calls made after it
        for call in (first, second):
            sent = [value for k, value in call if k == key]
            assert [value for value in values if value in sent] == sent
        assert len(values) == len(set(values)) == 7
