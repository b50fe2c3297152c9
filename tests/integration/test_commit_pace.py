"""Commits paced by the work (streams/commit_pace.py), through a real broker: a batch after a quiet
interval commits at once, and a batch right after a commit waits for the interval. The interval is
set to a minute, so the old fixed timer (first commit a minute after the start) cannot pass the
first check, and a committer that committed every batch cannot pass the second."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

import pytest

from aiokafka import AIOKafkaConsumer

from schemas.lifecycle import decode_event
from schemas.messages import ChatMessage
from streams.topics import Topics
from tests.integration.pipeline import EventLog, WorkerProcess, produce, wait_until

pytestmark = pytest.mark.integration


def _message(n: int) -> ChatMessage:
    return ChatMessage(id=f"m{n}", thread_id="tp", resource_id="rp", role="user",
                       created_at=int(time.time() * 1000), parts=[{"type": "text", "text": f"message {n}"}])


async def _wait_sent(bootstrap: str, topic: str, statuses: int, deadline_s: float = 40) -> None:
    """Until ``statuses`` status events are on ``topic``, committed or not (read_uncommitted)."""
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=None, auto_offset_reset="earliest",
                                isolation_level="read_uncommitted")
    await consumer.start()
    try:
        seen, deadline = 0, time.monotonic() + deadline_s
        while seen < statuses:
            assert time.monotonic() < deadline, f"{seen} of {statuses} status events sent"
            for records in (await consumer.getmany(timeout_ms=100)).values():
                seen += sum(1 for r in records if decode_event(r.value).type == "status")
    finally:
        await consumer.stop()


async def test_work_after_a_quiet_interval_commits_at_once_and_work_right_after_waits(
        kafka_bootstrap: str, tmp_path: Path) -> None:
    worker = WorkerProcess(kafka_bootstrap, f"pace{uuid.uuid4().hex[:8]}", {}, tmp_path,
                           extra_env={"OM_COMMIT_INTERVAL_MS": "60000", "OM_COMMIT_STALL_S": "0"})
    handle = worker.start()
    try:
        topics = Topics.for_prefix(worker.prefix)
        async with EventLog(kafka_bootstrap, topics.events) as log:  # read_committed: committed work only
            await produce(kafka_bootstrap, topics.messages, [("thread:tp", _message(1).to_bytes())])
            await wait_until(lambda: log.count("thread:tp", "status") == 1, 40,
                             "the first batch after a quiet interval was not committed at once")
            await produce(kafka_bootstrap, topics.messages, [("thread:tp", _message(2).to_bytes())])
            await _wait_sent(kafka_bootstrap, topics.events, statuses=2)  # folded and sent, in its transaction
            quiet_until = time.monotonic() + 3  # a commit at once would be visible within ~0.1 s
            while time.monotonic() < quiet_until:
                assert log.count("thread:tp", "status") == 1, "a batch right after a commit did not wait for the interval"
                await asyncio.sleep(0.05)
        assert handle.proc is not None and handle.proc.poll() is None, f"the worker exited; see {handle.log}"
    finally:
        worker.stop()
