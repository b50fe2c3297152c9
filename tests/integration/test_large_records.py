"""The topics that carry an observation log take records far past Kafka's 1 MB default
(streams/topics.py ``LARGE_RECORD_BYTES``): a high ``reflection.observationTokens`` makes logs, and so
record snapshots, Reflector jobs and answers, of megabytes. The worker creates them so and tells its
fold how much fits; topics made before keep the smaller limit, and the worker says how to raise it."""

from __future__ import annotations

import logging
import uuid

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from streams.services.kafka_topics import create_topics, delete_topics, max_message_bytes
from streams.settings import Settings
from streams.topics import KAFKA_DEFAULT_MAX_MESSAGE_BYTES, LARGE_RECORD_BYTES, RECORD_LIMIT, Topics, record_limit
from streams.worker import ensure_topics

pytestmark = pytest.mark.integration


async def test_the_log_carrying_topics_take_records_of_megabytes(kafka_bootstrap: str) -> None:
    prefix = f"big{uuid.uuid4().hex[:8]}"
    topics = Topics.for_prefix(prefix)
    try:
        settings = await ensure_topics(Settings(kafka_bootstrap=kafka_bootstrap, topic_prefix=prefix, partitions=1))
        limits = await max_message_bytes(kafka_bootstrap, topics.all())
        assert {name: limits[name] for name in topics.large()} == dict.fromkeys(topics.large(), LARGE_RECORD_BYTES)
        assert limits[topics.messages] == limits[topics.control] == KAFKA_DEFAULT_MAX_MESSAGE_BYTES  # an app's input
        assert settings.large_record_limit == record_limit(LARGE_RECORD_BYTES)
        value = b"x" * 3_000_000
        producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap, max_request_size=LARGE_RECORD_BYTES,
                                    enable_idempotence=True)
        await producer.start()
        try:
            for name in topics.large():
                await producer.send_and_wait(name, value, key=b"thread:t1")
        finally:
            await producer.stop()
        # read back with aiokafka's default fetch sizes (1 MB a partition), as the sink's and Faust's consumers
        consumer = AIOKafkaConsumer(*topics.large(), bootstrap_servers=kafka_bootstrap, auto_offset_reset="earliest",
                                    isolation_level="read_committed", enable_auto_commit=False)
        await consumer.start()
        try:
            seen: dict[str, int] = {}
            while len(seen) < 4:
                for tp, records in (await consumer.getmany(timeout_ms=10_000)).items():
                    seen.update({tp.topic: len(r.value) for r in records})
            assert seen == dict.fromkeys(topics.large(), len(value))
        finally:
            await consumer.stop()
    finally:
        await delete_topics(kafka_bootstrap, list(topics.all()))


async def test_topics_made_before_keep_their_limit_and_the_worker_says_how_to_raise_it(
        kafka_bootstrap: str, caplog: pytest.LogCaptureFixture) -> None:
    prefix = f"old{uuid.uuid4().hex[:8]}"
    topics = Topics.for_prefix(prefix)
    try:
        await create_topics(kafka_bootstrap, topics.all(), 1, 1)  # as a version before this one made them
        with caplog.at_level(logging.WARNING, logger="streams.worker"):
            settings = await ensure_topics(Settings(kafka_bootstrap=kafka_bootstrap, topic_prefix=prefix,
                                                    partitions=1))
        assert settings.large_record_limit == RECORD_LIMIT  # what the fold may send there
        [warning] = [r for r in caplog.records if r.msg == "om.topics.small_records"]
        assert "max.message.bytes" in warning.action and str(LARGE_RECORD_BYTES) in warning.action
    finally:
        await delete_topics(kafka_bootstrap, list(topics.all()))
