"""The split roles (``om run --role processor`` + ``--role llm``, two consumer groups) complete a
cycle through a real broker: the processor folds and asks, the LLM worker answers, the processor
applies. The LLM worker has no state table, so it is the case streams/split_assignor.py keeps: it
used to crash at its first assignment (``KeyError`` on the jobs topic) under exactly-once.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest

from schemas.messages import ChatMessage
from streams.topics import Topics
from tests.integration.pipeline import EventLog, WorkerProcess, produce, wait_until

pytestmark = pytest.mark.integration


async def test_processor_and_llm_roles_in_separate_processes_complete_an_observation(
        kafka_bootstrap: str, tmp_path: Path) -> None:
    worker = WorkerProcess(kafka_bootstrap, f"split{uuid.uuid4().hex[:8]}",
                           {"observation": {"messageTokens": 300, "bufferTokens": False}}, tmp_path, partitions=2)
    processor, llm = worker.start("processor"), worker.start("llm")
    try:
        topics = Topics.for_prefix(worker.prefix)
        filler = " ".join(f"fact{i} about the trip" for i in range(40))
        now = int(time.time() * 1000) - 60_000
        messages = [ChatMessage(id=f"m{i}", thread_id="ts", resource_id="rs", role="user", created_at=now + i * 1000,
                                parts=[{"type": "text", "text": f"turn {i}: {filler}"}]) for i in range(4)]
        async with EventLog(kafka_bootstrap, topics.events) as log:
            await produce(kafka_bootstrap, topics.messages, [("thread:ts", m.to_bytes()) for m in messages])
            await wait_until(lambda: log.count("thread:ts", "observation-end") >= 1, 90,
                             "no observation completed across the split roles")
        assert llm.proc is not None and llm.proc.poll() is None, f"the LLM worker exited; see {llm.log}"
        assert processor.proc is not None and processor.proc.poll() is None, f"the processor exited; see {processor.log}"
    finally:
        worker.stop()
