"""Hanging transactions, made on purpose, and the start-up cleanup that aborts them.

The broken state is made by :mod:`tests.integration.forgotten_transactions`. The first test pins
the broker behaviour that makes the cleanup necessary; the others check the cleanup.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from aiokafka import AIOKafkaProducer

from streams.harness.workers import drop_topics
from streams.services.txn_cleanup import abort_hanging_transactions
from streams.settings import Settings
from streams.topics import Topics
from streams.worker import prepare_broker
from tests.integration.forgotten_transactions import partition_verification_off, write_forgotten_batch
from tests.integration.kafka_helpers import read_until

pytestmark = pytest.mark.integration


@pytest.fixture
async def unverified_broker(kafka_bootstrap: str) -> AsyncIterator[str]:
    """The session broker with partition verification off for this test only."""
    async with partition_verification_off(kafka_bootstrap):
        yield kafka_bootstrap


async def commit_one(bootstrap: str, transactional_id: str, topic: str, value: bytes) -> None:
    """What the restarted worker does: initialise the same transactional id, write, commit."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=transactional_id)
    await producer.start()
    try:
        async with producer.transaction():
            await producer.send_and_wait(topic, value, partition=0)
    finally:
        await producer.stop()


async def test_a_forgotten_batch_is_committed_by_the_next_commit_of_its_transactional_id(
        unverified_broker: str, new_topic) -> None:
    """The broker behaviour behind the duplicate: the same producer id's COMMIT marker covers it."""
    topic = await new_topic(partitions=1)
    txn_id = f"hang-{uuid.uuid4().hex[:8]}"
    await write_forgotten_batch(unverified_broker, txn_id, topic, b"forgotten")
    await commit_one(unverified_broker, txn_id, topic, b"after-restart")
    assert await read_until(unverified_broker, topic, b"after-restart") == [b"forgotten", b"after-restart"]


async def test_cleanup_aborts_a_forgotten_batch_so_the_next_commit_does_not_carry_it(
        unverified_broker: str, new_topic) -> None:
    topic = await new_topic(partitions=1)
    txn_id = f"hang-{uuid.uuid4().hex[:8]}"
    await write_forgotten_batch(unverified_broker, txn_id, topic, b"forgotten")
    aborted = await abort_hanging_transactions(unverified_broker, (topic,))
    print(f"aborted {[(t.topic, t.partition, t.producer_id, t.start_offset) for t in aborted]}")
    assert [(t.topic, t.partition, t.start_offset) for t in aborted] == [(topic, 0, 0)]
    await commit_one(unverified_broker, txn_id, topic, b"after-restart")
    assert await read_until(unverified_broker, topic, b"after-restart") == [b"after-restart"]
    assert await abort_hanging_transactions(unverified_broker, (topic,)) == []


async def test_cleanup_leaves_a_live_transaction_alone(kafka_bootstrap: str, new_topic) -> None:
    topic = await new_topic(partitions=1)
    producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap, transactional_id=f"live-{uuid.uuid4().hex[:8]}")
    await producer.start()
    try:
        await producer.begin_transaction()
        await producer.send_and_wait(topic, b"in-flight", partition=0)
        assert await abort_hanging_transactions(kafka_bootstrap, (topic,)) == []
        await producer.commit_transaction()
    finally:
        await producer.stop()
    assert await read_until(kafka_bootstrap, topic, b"in-flight") == [b"in-flight"]


async def test_om_run_aborts_what_hangs_on_its_own_topics_and_nothing_else(unverified_broker: str, new_topic) -> None:
    """``prepare_broker`` is what ``om run`` does before Faust starts: the pipeline's topics (and its
    changelogs, ``<prefix>-...``) are cleaned; another application's topic is not its business."""
    prefix = f"hang{uuid.uuid4().hex[:8]}"
    settings = Settings(kafka_bootstrap=unverified_broker, topic_prefix=prefix, partitions=1)
    events = Topics.for_prefix(prefix).events
    foreign = await new_topic(partitions=1)
    try:
        await prepare_broker(settings)  # creates the topics; nothing hangs yet
        await write_forgotten_batch(unverified_broker, f"{prefix}-worker-1-0", events, b"forgotten")
        await write_forgotten_batch(unverified_broker, f"other-{prefix}", foreign, b"not ours")
        await prepare_broker(settings)
        await commit_one(unverified_broker, f"{prefix}-worker-1-0", events, b"after-restart")
        assert await read_until(unverified_broker, events, b"after-restart") == [b"after-restart"]
        left = await abort_hanging_transactions(unverified_broker, (foreign,))
        assert [(t.topic, t.start_offset) for t in left] == [(foreign, 0)], "another application's topic was touched"
    finally:
        await drop_topics(unverified_broker, prefix)  # the pipeline's topics prepare_broker made
