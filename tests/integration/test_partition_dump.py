"""streams/harness/partition_dump.py against the real broker: what a failing fault test prints must
tell a committed record from an aborted one, and say so when a read did not reach the end."""

from __future__ import annotations

import uuid

import orjson
import pytest
from aiokafka import AIOKafkaProducer

from streams.app import STATE_TABLE
from streams.harness.partition_dump import describe_partition
from streams.services.kafka_topics import create_topics, delete_topics
from streams.topics import Topics

pytestmark = pytest.mark.integration


async def test_committed_and_aborted_records_are_told_apart(kafka_bootstrap: str) -> None:
    prefix = f"dump{uuid.uuid4().hex[:8]}"
    topics = Topics.for_prefix(prefix)
    names = [*topics.all(), f"{prefix}-worker-{STATE_TABLE}-changelog"]
    await create_topics(kafka_bootstrap, names, partitions=1)
    producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap, transactional_id=f"{prefix}-dump")
    await producer.start()
    try:
        for cycle, commit in (("kept", True), ("dropped", False), ("kept-too", True)):
            await producer.begin_transaction()
            await producer.send_and_wait(topics.results, orjson.dumps({"kind": "observe-result", "cycle_id": cycle}),
                                         key=b"thread:t", partition=0)
            await (producer.commit_transaction() if commit else producer.abort_transaction())
        dump = await describe_partition(kafka_bootstrap, prefix, 0)
    finally:
        await producer.stop()
        await delete_topics(kafka_bootstrap, names)
    lines = dump.splitlines()
    assert lines[0] == f"partition 0 (group {prefix}-worker):"
    assert "  results: committed None, end 6" in lines
    records = [line.split() for line in lines if line.startswith("    ")]
    assert records == [["0", "thread:t", "observe-result", "kept"],
                       ["2", "ABT", "thread:t", "observe-result", "dropped"],
                       ["4", "thread:t", "observe-result", "kept-too"]]
