"""Issue 26: the broker is killed (-9) and restarted while the SDK's ``send_many`` is producing a few
thousand messages; every message is on the messages topic exactly once, the calls in flight just
took longer, and aiokafka's flood about the dead broker reached the log as two WARNINGs (down, back).

The test runs its own single broker (private_broker: free ports, the session's jars), so killing
it breaks nothing else. The three-broker cluster of the issue (a leader election, min.insync.replicas
2) is tests/cluster/test_producer_loss.py.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from aiokafka import AIOKafkaConsumer

from streams.broker_log import BrokerLossHandler
from streams.sdk.client import OMClient
from streams.services import process
from streams.services.kafka import LocalKafkaBroker
from streams.services.kafka_health import port_accepts
from streams.settings import Settings
from streams.topics import Topics
from streams.worker import ensure_topics
from tests.faults.conftest import FaultReport
from tests.integration.kafka_helpers import FAST_CONSUMER, private_broker

pytestmark = pytest.mark.integration

BATCHES, PER_BATCH = 16, 250  # 4,000 messages in 16 send_many calls


@pytest.fixture
def own_broker(tmp_path: Path) -> Iterator[LocalKafkaBroker]:
    broker = private_broker(tmp_path)
    broker.start()
    yield broker
    broker.stop()


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def messages(batch: int, run: str) -> list[dict]:
    return [{"id": f"{run}-{batch}-{n}", "thread_id": f"t{n % 8}", "resource_id": "r1", "role": "user",
             "created_at": 1_700_000_000_000 + batch * PER_BATCH + n,
             "parts": [{"type": "text", "text": f"message {n} of batch {batch} " + "x" * 400}]}
            for n in range(PER_BATCH)]


def send_batches(client: OMClient, run: str, batches: int, acknowledged: list[int]) -> asyncio.Task:
    """``batches`` send_many calls in turn, each batch number appended once acknowledged."""
    async def send_all() -> None:
        for batch in range(batches):
            await client.send_many(messages(batch, run))
            acknowledged.append(batch)

    return asyncio.create_task(send_all())


async def wait_until(condition, deadline_s: float, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + deadline_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} within {deadline_s} s")
        await asyncio.sleep(0.01)


async def ids_on_topic(bootstrap: str, topic: str, expected: int, deadline_s: float = 60.0) -> list[str]:
    """Every record's message id, read from the beginning up to the end offsets known now."""
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=None, **FAST_CONSUMER)
    await consumer.start()
    try:
        await wait_until(lambda: consumer.assignment(), 20, "no partitions assigned")
        ends = await consumer.end_offsets(list(consumer.assignment()))
        assert sum(ends.values()) >= expected, f"only {sum(ends.values())} records on {topic}"
        ids: list[str] = []
        deadline = time.monotonic() + deadline_s
        while [tp for tp, end in ends.items() if await consumer.position(tp) < end]:
            assert time.monotonic() < deadline, f"read {len(ids)} of {sum(ends.values())} records in time"
            for records in (await consumer.getmany(timeout_ms=200)).values():
                ids.extend(orjson.loads(r.value)["id"] for r in records)
        return ids
    finally:
        await consumer.stop()


async def test_send_many_rides_through_a_killed_and_restarted_broker(
    own_broker: LocalKafkaBroker, tmp_path: Path, fault: FaultReport
) -> None:
    run = uuid.uuid4().hex[:8]
    settings = Settings(kafka_bootstrap=own_broker.bootstrap, topic_prefix=f"loss{run}", partitions=2,
                        data_dir=tmp_path)
    await ensure_topics(settings)
    raw, folded = Collect(), Collect()
    folding = BrokerLossHandler(folded)
    root = logging.getLogger()
    root.addHandler(raw)
    root.addHandler(folding)
    lines: list[str] = []
    acknowledged: list[int] = []
    killed_at: list[int] = []
    try:
        async with OMClient(settings, scope="thread", report=lines.append) as client:
            sending = send_batches(client, run, BATCHES, acknowledged)
            await wait_until(lambda: len(acknowledged) >= 3 or sending.done(), 60, "three batches acknowledged")
            assert not sending.done(), "everything was sent before the broker could be killed"
            pid = process.running_pid(own_broker.pid_file, str(own_broker.config_file))
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            killed_at.append(len(acknowledged))
            await wait_until(lambda: not process.is_running(pid, str(own_broker.config_file))
                             and not port_accepts("127.0.0.1", own_broker.port, timeout=0.1)
                             and not port_accepts("127.0.0.1", own_broker.port + 1, timeout=0.1), 20,
                             "the killed broker's ports were not released")
            down_since = time.monotonic()
            fault.broke(f"killed the broker (-9) after {killed_at[0]} of {BATCHES} send_many calls were acknowledged")
            await asyncio.to_thread(own_broker.start)
            fault.broke(f"restarted it; {time.monotonic() - down_since:.1f} s without a broker")
            await asyncio.wait_for(sending, 180)
        assert acknowledged == list(range(BATCHES))
        ids = await ids_on_topic(own_broker.bootstrap, Topics.for_prefix(settings.topic_prefix).messages, BATCHES * PER_BATCH)
        assert len(ids) == len(set(ids)) == BATCHES * PER_BATCH, \
            f"{len(ids)} records, {len(set(ids))} distinct, {BATCHES * PER_BATCH} sent"
        fault.checked(f"all {len(ids):,} messages on the messages topic exactly once "
                      f"(kill during call {killed_at[0] + 1}; {len(lines)} progress line(s): {lines[:2]})")
    finally:
        root.removeHandler(raw)
        root.removeHandler(folding)
    # the worker's next progress line, a quiet period after the restart: the broker is announced back
    folding.handle(logging.makeLogRecord({"name": "streams.worker", "msg": "om.job.done", "levelno": logging.INFO,
                                          "levelname": "INFO", "created": time.time() + folding.quiet_s}))
    from_aiokafka = [r for r in raw.records if r.name.startswith("aiokafka")]
    about_brokers = [r for r in folded.records if r.name == "streams.kafka.brokers"]
    other_aiokafka = [r for r in folded.records if r.name.startswith("aiokafka")]
    fault.checked(f"{len(from_aiokafka)} aiokafka WARNING/ERROR records about the outage became "
                  f"{len(about_brokers)} broker line(s) ({[r.getMessage() + ' ' + r.broker for r in about_brokers]}) "
                  f"and {len(other_aiokafka)} other aiokafka line(s)")
    events = [r.getMessage() for r in about_brokers]
    assert events[0] == "kafka.broker.down" and events[-1] == "kafka.broker.back"
    assert set(events[1:-1]) <= {"kafka.broker.still_down"}
    assert {r.broker for r in about_brokers} == {own_broker.bootstrap}  # type: ignore[attr-defined]
    assert len(other_aiokafka) <= 3 and len(from_aiokafka) > 10 * len(about_brokers)
    assert folded.records[-1].name == "streams.worker"
