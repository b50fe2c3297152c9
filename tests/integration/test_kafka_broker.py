"""The broker behaves like Kafka for what the pipeline relies on: groups, commits, durability.

The restart test runs its own broker through the project's scripts (streams/services/kafka.py)
in a temporary directory, so it proves the local backend keeps data and committed offsets on
disk without disturbing the session's shared broker.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from streams.services.kafka import JVM_SMALL_MACHINE, LocalKafkaBroker
from streams.services.kafka_health import is_healthy
from streams.services.kafka_topics import create_topics
from streams.settings import get_settings
from tests.integration.kafka_helpers import FAST_CONSUMER, private_broker, read_records

pytestmark = pytest.mark.integration


async def test_admin_creates_topic_with_requested_partitions(kafka_bootstrap: str, new_topic) -> None:
    topic = await new_topic(partitions=3)
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    await admin.start()
    try:
        [description] = await admin.describe_topics([topic])
    finally:
        await admin.close()
    assert description["error_code"] == 0
    assert sorted(p["partition"] for p in description["partitions"]) == [0, 1, 2]


async def test_group_resumes_from_its_committed_offset(kafka_bootstrap: str, new_topic) -> None:
    topic = await new_topic(partitions=1)
    await _produce(kafka_bootstrap, topic, [f"m{i}".encode() for i in range(6)])

    async with _consumer(kafka_bootstrap, topic, "g-resume") as first:
        records = await read_records(first, 4)
        await first.commit({TopicPartition(topic, 0): records[3].offset + 1})

    async with _consumer(kafka_bootstrap, topic, "g-resume") as second:
        rest = await read_records(second, 2)
    assert [r.value for r in records[:4]] == [b"m0", b"m1", b"m2", b"m3"]
    assert [r.value for r in rest] == [b"m4", b"m5"]


async def test_keyed_records_keep_their_order_within_a_partition(kafka_bootstrap: str, new_topic) -> None:
    topic = await new_topic(partitions=3)
    producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap, enable_idempotence=True)
    await producer.start()
    try:
        for i in range(30):
            await producer.send(topic, str(i).encode(), key=f"thread:{i % 3}".encode())
        await producer.flush()
    finally:
        await producer.stop()
    async with _consumer(kafka_bootstrap, topic, "g-order") as consumer:
        records = await read_records(consumer, 30)
    by_key: dict[bytes, list[int]] = {}
    for record in records:
        by_key.setdefault(record.key, []).append(int(record.value))
    assert {k: v for k, v in by_key.items()} == {
        f"thread:{k}".encode(): list(range(k, 30, 3)) for k in range(3)
    }


async def test_local_broker_keeps_records_and_commits_across_a_restart(
    test_backend: str, kafka_bootstrap: str, tmp_path: Path
) -> None:
    if test_backend != "local":
        pytest.skip("restarts a broker through the project's local scripts; the docker backend has none")
    broker = private_broker(tmp_path)
    await asyncio.to_thread(broker.start)
    try:
        await create_topics(broker.bootstrap, ["durable"], partitions=2)
        await _produce(broker.bootstrap, "durable", [f"r{i}".encode() for i in range(10)], keyed=True)
        async with _consumer(broker.bootstrap, "durable", "g-durable") as consumer:
            before = await read_records(consumer, 10)
            await consumer.commit()

        first_pid = broker.status().pid
        command = Path(f"/proc/{first_pid}/cmdline").read_bytes().split(b"\0")
        assert all(flag.encode() in command for flag in JVM_SMALL_MACHINE), "C1 only, serial GC (streams/services/kafka.py)"
        assert await asyncio.to_thread(broker.stop) is True
        assert not await asyncio.to_thread(is_healthy, broker.bootstrap, 1.0)
        assert await asyncio.to_thread(broker.start) is True
        assert broker.status().pid not in (None, first_pid)

        await _produce(broker.bootstrap, "durable", [b"after-restart"], keyed=True)
        async with _consumer(broker.bootstrap, "durable", "g-durable") as resumed:
            after_commit = await read_records(resumed, 1)
        async with _consumer(broker.bootstrap, "durable", "g-fresh") as fresh:
            everything = await read_records(fresh, 11)
    finally:
        await asyncio.to_thread(broker.stop)
    assert [r.value for r in after_commit] == [b"after-restart"]
    assert sorted(r.value for r in everything) == sorted([r.value for r in before] + [b"after-restart"])


async def test_starting_a_running_broker_again_is_harmless(test_backend: str, kafka_bootstrap: str) -> None:
    if test_backend != "local":
        pytest.skip("checks the project's local broker script; the docker backend has none")
    broker = LocalKafkaBroker.from_settings(get_settings())
    pid = broker.status().pid
    assert await asyncio.to_thread(broker.start) is False
    assert broker.status().pid == pid
    assert await asyncio.to_thread(is_healthy, kafka_bootstrap)


async def _produce(bootstrap: str, topic: str, values: list[bytes], keyed: bool = False) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True)
    await producer.start()
    try:
        for i, value in enumerate(values):
            await producer.send(topic, value, key=f"k{i}".encode() if keyed else None)
        await producer.flush()
    finally:
        await producer.stop()


class _consumer:
    """``async with _consumer(...) as c``: a started consumer in ``group``, stopped on exit."""

    def __init__(self, bootstrap: str, topic: str, group: str) -> None:
        self._consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, **FAST_CONSUMER)

    async def __aenter__(self) -> AIOKafkaConsumer:
        await self._consumer.start()
        return self._consumer

    async def __aexit__(self, *exc: object) -> None:
        await self._consumer.stop()
