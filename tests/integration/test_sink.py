"""The ClickHouse sink against the real broker and engine: idempotent, lossless, never stalled.

Its fault tests (ClickHouse refusing inserts, the sink killed mid-batch) are in tests/faults/.
"""

from __future__ import annotations

import uuid

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from schemas.base import decode
from schemas.deltas import ChunkChanged
from schemas.dlq import DeadLetter
from tests.integration.kafka_helpers import FAST_CONSUMER, read_records
from streams.sink import Sink, SinkOptions
from tests.integration.om_pipeline import (
    FAST_SINK,
    database_client,
    make_topics,
    publish,
    reflective_conversation,
    sink_until_drained,
    table_dump,
)

pytestmark = pytest.mark.integration


async def test_replaying_the_topics_twice_leaves_the_tables_identical(kafka_bootstrap, clickhouse_dsn, new_topic):
    talk = reflective_conversation()
    topics = await make_topics(new_topic)
    total = await publish(kafka_bootstrap, topics, talk)
    client = database_client(clickhouse_dsn)
    once = await sink_until_drained(client, kafka_bootstrap, topics, total)
    first = table_dump(client)
    again = await sink_until_drained(client, kafka_bootstrap, topics, total)  # a second group: full replay
    assert again.stats.rows == once.stats.rows > 0, "the replay really re-inserted"
    assert table_dump(client) == first
    inserted = {d.message.id for _, d in talk.records if d.kind == "message-inserted"}
    assert inserted, "the conversation has temporal-gap reminders"
    assert len(first["om_messages"]) == len({m.id for _, m in talk.messages} | inserted)
    assert len(first["om_records"]) == len({(d.key, d.record.generation) for _, d in talk.records
                                            if d.kind == "record-snapshot"})


async def test_poison_records_go_to_the_dead_letter_topic_and_do_not_stall(kafka_bootstrap, clickhouse_dsn, new_topic):
    talk = reflective_conversation(threads=1, messages=30)
    topics = await make_topics(new_topic, partitions=1)
    chunk = next(d for _, d in talk.records if isinstance(d, ChunkChanged))
    too_big = chunk.model_copy(update={"chunk": chunk.chunk.model_copy(update={"token_count": 2**40})})
    producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap)
    await producer.start()
    try:
        await producer.send_and_wait(topics.messages, b"\xff not json", key=b"thread:t0")
        await producer.send_and_wait(topics.events, b'{"type": "status"}', key=b"thread:t0")
        await producer.send_and_wait(topics.records, too_big.to_bytes(), key=b"thread:t0")
    finally:
        await producer.stop()
    total = 3 + await publish(kafka_bootstrap, topics, talk)
    client = database_client(clickhouse_dsn)
    sink = await sink_until_drained(client, kafka_bootstrap, topics, total)

    # the undecodable chat message is the processor's to dead-letter (once): the sink skips it
    assert sink.stats.dead_letters == 2 and sink.stats.not_materialised == 1
    consumer = AIOKafkaConsumer(topics.dlq, bootstrap_servers=kafka_bootstrap, **FAST_CONSUMER)
    await consumer.start()
    try:
        letters = [decode(DeadLetter, r.value) for r in await read_records(consumer, 2)]
    finally:
        await consumer.stop()
    assert sorted((letter.topic, letter.stage) for letter in letters) == sorted(
        [(topics.events, "validate"), (topics.records, "apply")])
    assert too_big.to_bytes() in {letter.value for letter in letters}
    assert len(table_dump(client)["om_messages"]) == len(talk.messages)


async def test_the_sinks_producer_tracks_the_topics_it_sends_to(kafka_bootstrap, clickhouse_dsn, new_topic):
    """A client that tracks no topic asks for every topic in the cluster at each periodic metadata
    refresh (streams/services/kafka_topics.py); the sink's producer may send nothing for days."""
    topics = await make_topics(new_topic, partitions=1)
    sink = Sink(database_client(clickhouse_dsn), kafka_bootstrap, topics,
                SinkOptions(group_id=f"sink-{uuid.uuid4().hex[:8]}", max_wait_ms=50, consumer=FAST_SINK))
    await sink.start()
    try:
        assert sink._producer is not None and sink._producer.client._topics == {topics.control, topics.dlq}
    finally:
        await sink.stop()
