"""The ClickHouse sink against the real broker and engine: idempotent, lossless, never stalled."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import orjson
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from processors.config import OMConfig
from schemas.base import decode
from schemas.deltas import ChunkChanged
from schemas.dlq import DeadLetter
from streams.sink import Sink, SinkOptions
from tests.integration.kafka_helpers import FAST_CONSUMER, read_records
from tests.integration.om_pipeline import (
    FAST_SINK,
    REFLECTIVE,
    Conversation,
    committed_total,
    database_client,
    make_topics,
    publish,
    sink_until_drained,
    table_dump,
    wait_committed,
)

pytestmark = pytest.mark.integration
REPO_ROOT = Path(__file__).resolve().parents[2]


def conversation(threads: int = 2, messages: int = 120) -> Conversation:
    talk = Conversation(OMConfig.model_validate(REFLECTIVE))
    for n in range(threads):
        talk.talk(messages, thread=f"t{n}", resource=f"r{n % 2}", gap_every=30)
    return talk


async def test_replaying_the_topics_twice_leaves_the_tables_identical(kafka_bootstrap, clickhouse_dsn, new_topic):
    talk = conversation()
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
    talk = conversation(threads=1, messages=30)
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

    assert sink.stats.dead_letters == 3
    consumer = AIOKafkaConsumer(topics.dlq, bootstrap_servers=kafka_bootstrap, **FAST_CONSUMER)
    await consumer.start()
    try:
        letters = [decode(DeadLetter, r.value) for r in await read_records(consumer, 3)]
    finally:
        await consumer.stop()
    assert sorted((letter.topic, letter.stage) for letter in letters) == sorted(
        [(topics.messages, "decode"), (topics.events, "validate"), (topics.records, "apply")])
    assert {letter.value for letter in letters} >= {b"\xff not json", too_big.to_bytes()}
    assert len(table_dump(client)["om_messages"]) == len(talk.messages)


async def test_clickhouse_unavailable_pauses_the_sink_and_loses_nothing(kafka_bootstrap, clickhouse_dsn, new_topic):
    talk = conversation(threads=1, messages=60)
    topics = await make_topics(new_topic)
    total = await publish(kafka_bootstrap, topics, talk)
    reference = database_client(clickhouse_dsn)
    await sink_until_drained(reference, kafka_bootstrap, topics, total)

    client = database_client(clickhouse_dsn)
    client.command("DETACH TABLE om_records")
    group = f"outage-{uuid.uuid4().hex[:8]}"
    sink = Sink(client, kafka_bootstrap, topics, SinkOptions(group_id=group, max_wait_ms=50, retry_initial_s=0.05,
                                                             retry_max_s=0.2, consumer=FAST_SINK))
    await sink.start()
    try:
        deadline = time.monotonic() + 30
        while sink.stats.retries < 5:
            assert time.monotonic() < deadline, "the sink never retried"
            await asyncio.sleep(0.02)
        assert await committed_total(kafka_bootstrap, group, topics) == 0
        assert sink.stats.dead_letters == 0
        client.command("ATTACH TABLE om_records")
        await wait_committed(kafka_bootstrap, group, topics, total, 30)
    finally:
        await sink.stop()
    assert table_dump(client) == table_dump(reference)


def _child(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "tests.integration.sink_process", *args], cwd=REPO_ROOT,
                            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _dump_in_child(dsn: str) -> str:
    child = _child("dump", dsn)
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    return out.strip()


async def test_sink_killed_mid_batch_and_restarted_loses_and_duplicates_nothing(
        kafka_bootstrap, clickhouse_dsn, new_topic, tmp_path):
    talk = conversation(threads=4, messages=150)
    topics = await make_topics(new_topic)
    total = await publish(kafka_bootstrap, topics, talk)
    dsn = f"chdb://{tmp_path / 'killed'}"
    group = f"killed-{uuid.uuid4().hex[:8]}"
    args = ("run", dsn, kafka_bootstrap, orjson.dumps(dataclasses.asdict(topics)).decode(), group, "100")

    first = _child(*args)
    deadline = time.monotonic() + 60
    while (done := await committed_total(kafka_bootstrap, group, topics)) == 0:
        assert first.poll() is None, first.stderr.read() if first.stderr else ""
        assert time.monotonic() < deadline, "the sink committed nothing"
        await asyncio.sleep(0.01)
    first.send_signal(signal.SIGKILL)
    first.wait()
    assert 0 < done < total, f"killed too late to prove anything: {done} of {total}"

    second = _child(*args)
    try:
        await wait_committed(kafka_bootstrap, group, topics, total, 60)
    finally:
        second.send_signal(signal.SIGKILL)
        second.wait()

    reference = database_client(clickhouse_dsn)
    await sink_until_drained(reference, kafka_bootstrap, topics, total)
    assert _dump_in_child(dsn) == repr(table_dump(reference))
