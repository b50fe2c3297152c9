"""The producer guarantees the pipeline's exactly-once effects rest on, against the real broker.

These are the client/broker compatibility checks for aiokafka 0.14 with the pinned Kafka
version: idempotent producing, transactions that commit consumer offsets atomically with output,
and read_committed consumers that never see aborted records.
"""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from tests.integration.kafka_helpers import FAST_CONSUMER, read_records, read_until

pytestmark = pytest.mark.integration


async def test_idempotent_producer_writes_each_record_once_in_order(kafka_bootstrap: str, new_topic) -> None:
    topic = await new_topic(partitions=1)
    producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap, enable_idempotence=True, acks="all")
    await producer.start()
    try:
        batches = [await producer.send(topic, f"v{i}".encode()) for i in range(50)]
        offsets = [(await b).offset for b in batches]
    finally:
        await producer.stop()
    assert offsets == list(range(50))
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=kafka_bootstrap, group_id=None, **FAST_CONSUMER)
    await consumer.start()
    try:
        values = [r.value for r in await read_records(consumer, 50)]
    finally:
        await consumer.stop()
    assert values == [f"v{i}".encode() for i in range(50)]


async def test_read_committed_consumer_never_sees_aborted_records(kafka_bootstrap: str, new_topic) -> None:
    topic = await new_topic(partitions=1)
    producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap, transactional_id=f"tx-{uuid.uuid4().hex}")
    await producer.start()
    try:
        async with producer.transaction():
            await producer.send(topic, b"committed-1")
        await producer.begin_transaction()
        await producer.send(topic, b"aborted")
        await producer.abort_transaction()
        async with producer.transaction():
            await producer.send(topic, b"committed-2")
    finally:
        await producer.stop()

    committed = await read_until(kafka_bootstrap, topic, isolation="read_committed", until=b"committed-2")
    uncommitted = await read_until(kafka_bootstrap, topic, isolation="read_uncommitted", until=b"committed-2")
    assert committed == [b"committed-1", b"committed-2"]
    assert uncommitted == [b"committed-1", b"aborted", b"committed-2"]


async def test_offsets_committed_in_a_transaction_move_only_when_it_commits(kafka_bootstrap: str, new_topic) -> None:
    source, sink = await new_topic(partitions=1), await new_topic(partitions=1)
    group = f"g-{uuid.uuid4().hex[:8]}"
    partition = TopicPartition(source, 0)
    producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap, transactional_id=f"tx-{uuid.uuid4().hex}")
    await producer.start()
    try:
        await producer.begin_transaction()
        await producer.send(sink, b"out-aborted")
        await producer.send_offsets_to_transaction({partition: 7}, group)
        await producer.abort_transaction()
        assert await _committed(kafka_bootstrap, group, partition) is None

        async with producer.transaction():
            await producer.send(sink, b"out-committed")
            await producer.send_offsets_to_transaction({partition: 3}, group)
    finally:
        await producer.stop()
    assert await _committed_once_settled(kafka_bootstrap, group, partition, 3) == 3
    committed = await read_until(kafka_bootstrap, sink, isolation="read_committed", until=b"out-committed")
    assert committed == [b"out-committed"]


async def _committed_once_settled(bootstrap: str, group: str, partition: TopicPartition, expected: int,
                                  deadline_s: float = 10.0) -> int | None:
    """The group's committed offset, asked again until it is ``expected`` or ``deadline_s`` passes:
    the broker answers a transaction's commit before its markers reach the group coordinator, so an
    offset committed in it becomes visible to a fetch a moment later."""
    deadline = time.monotonic() + deadline_s
    while (found := await _committed(bootstrap, group, partition)) != expected and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return found


async def _committed(bootstrap: str, group: str, partition: TopicPartition) -> int | None:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    await consumer.start()
    try:
        return await consumer.committed(partition)
    finally:
        await consumer.stop()
