"""streams.changelog_tail against the real broker: the last committed record of a transactional
partition, past commit markers, aborted transactions and more markers than the first window."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from streams.changelog_tail import FIRST_WINDOW, last_committed_offsets

pytestmark = pytest.mark.integration


@pytest.fixture
async def producer(kafka_bootstrap: str) -> AsyncIterator[AIOKafkaProducer]:
    p = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap, transactional_id=f"tail-{uuid.uuid4().hex[:8]}")
    await p.start()
    yield p
    await p.stop()


@pytest.fixture
async def reader(kafka_bootstrap: str) -> AsyncIterator[AIOKafkaConsumer]:
    c = AIOKafkaConsumer(bootstrap_servers=kafka_bootstrap, group_id=None, isolation_level="read_committed",
                         enable_auto_commit=False, fetch_max_wait_ms=20)
    await c.start()
    yield c
    await c.stop()


async def commit(producer: AIOKafkaProducer, topic: str, partition: int, values: list[bytes]) -> int:
    """One committed transaction of ``values``; the offset of its last record."""
    async with producer.transaction():
        sent = [await producer.send(topic, v, key=b"k", partition=partition) for v in values]
    return (await sent[-1]).offset


async def abort(producer: AIOKafkaProducer, topic: str, partition: int) -> None:
    """One aborted transaction of one record (written, then an ABORT marker)."""
    await producer.begin_transaction()
    await (await producer.send(topic, b"dropped", key=b"k", partition=partition))
    await producer.abort_transaction()


async def test_the_last_committed_record_is_found_behind_markers_and_aborted_transactions(
    new_topic, producer: AIOKafkaProducer, reader: AIOKafkaConsumer
) -> None:
    topic = await new_topic(partitions=4)
    tp = [TopicPartition(topic, p) for p in range(4)]
    # 0: commits only, the tail is [records][COMMIT]
    await commit(producer, topic, 0, [b"a", b"b"])
    last_0 = await commit(producer, topic, 0, [b"c", b"d", b"e"])
    # 1: a committed record, then aborted transactions spanning many first windows of offsets
    last_1 = await commit(producer, topic, 1, [b"kept"])
    for _ in range(3 * FIRST_WINDOW):
        await abort(producer, topic, 1)
    # 2: nothing but aborted records and markers; 3: empty
    await abort(producer, topic, 2)

    found = await last_committed_offsets(reader, set(tp))

    assert found == {tp[0]: last_0, tp[1]: last_1, tp[2]: -1, tp[3]: -1}
    end_1 = (await reader.end_offsets([tp[1]]))[tp[1]]
    assert end_1 - last_1 > FIRST_WINDOW * 2, "the aborted tail must outgrow the first window"


async def test_the_tail_waits_for_an_open_transaction_to_settle_and_includes_its_records(
    kafka_bootstrap: str, new_topic, producer: AIOKafkaProducer, reader: AIOKafkaConsumer
) -> None:
    """A previous owner's last transaction, written but not yet committed when recovery asks: the
    tail is taken after its commit, so it ends at that transaction's last record."""
    import asyncio

    topic = await new_topic(partitions=1)
    tp = TopicPartition(topic, 0)
    await commit(producer, topic, 0, [b"before"])
    await producer.begin_transaction()
    pending = await (await producer.send(topic, b"in flight", key=b"k", partition=0))
    uncommitted = AIOKafkaConsumer(bootstrap_servers=kafka_bootstrap, group_id=None,
                                   isolation_level="read_uncommitted", enable_auto_commit=False)
    await uncommitted.start()
    try:
        with pytest.raises(TimeoutError, match="stayed open"):
            await last_committed_offsets(reader, {tp}, deadline_s=0.3, uncommitted=uncommitted)
        asking = asyncio.create_task(last_committed_offsets(reader, {tp}, deadline_s=20, uncommitted=uncommitted))
        await producer.commit_transaction()
        assert await asyncio.wait_for(asking, 20) == {tp: pending.offset}
    finally:
        await uncommitted.stop()
