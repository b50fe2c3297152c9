"""Time without messages: the worker's timer emits idle ticks, so buffered chunks activate after
``activate_after_idle`` even when the thread has gone quiet (spec §4.7)."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

import pytest

from streams.topics import Topics
from tests.integration.pipeline import EventLog, WorkerProcess, conversation, expected_run, produce, worker_config

pytestmark = pytest.mark.integration


async def test_a_quiet_thread_activates_its_chunks_after_the_idle_ttl(kafka_bootstrap: str, tmp_path: Path) -> None:
    worker = WorkerProcess(kafka_bootstrap, f"i{uuid.uuid4().hex[:8]}",
                           {"activateAfterIdle": "2s", "observation": {"messageTokens": 3000}}, tmp_path,
                           extra_env={"OM_IDLE_CHECK_SECONDS": "0.5"})
    messages = conversation(threads=1, per_thread=40)
    expected = await expected_run(messages, worker_config(worker))
    first_gate = expected.gates["thread:t0"][0][0]
    quiet_after = messages[: first_gate + 1]
    assert expected.events["thread:t0"][0][0] == "buffering-start"
    worker.start()
    try:
        topics = Topics.for_prefix(worker.prefix)
        async with EventLog(kafka_bootstrap, topics.events) as log:
            await produce(kafka_bootstrap, topics.messages, [("thread:t0", m.to_bytes()) for m in quiet_after])
            deadline = time.monotonic() + 60
            while not [e for e in log.by_key["thread:t0"] if e.type == "activation"]:
                assert time.monotonic() < deadline, "the quiet thread's chunk never activated"
                await asyncio.sleep(0.05)
        activation = next(e for e in log.by_key["thread:t0"] if e.type == "activation")
        assert activation.triggered_by == "ttl" and activation.ttl_expired_ms >= 2000
        applied = [e.applied_through.message_id for e in log.by_key["thread:t0"]
                   if e.type == "status" and e.applied_through]
        assert applied[-1] == quiet_after[-1].id, "no message arrived after the chunk: the timer did it"
    finally:
        worker.stop()
