"""The streaming runtime against the real broker: same decisions as the core, through Kafka."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from streams.topics import Topics
from tests.integration.pipeline import (
    EventLog,
    WorkerProcess,
    conversation,
    expected_run,
    gated_conversation,
    worker_config,
)

pytestmark = pytest.mark.integration

CONFIG = {"observation": {"messageTokens": 2000}, "reflection": {"observationTokens": 1500}}


@pytest.fixture
def worker(kafka_bootstrap: str, tmp_path: Path):
    process = WorkerProcess(kafka_bootstrap, f"t{uuid.uuid4().hex[:8]}", CONFIG, tmp_path)
    yield process
    process.stop()


async def test_250_messages_yield_the_core_sequence(worker: WorkerProcess, kafka_bootstrap: str) -> None:
    messages = conversation(threads=1, per_thread=250)  # every kind of cycle, 62 gates
    config = worker_config(worker)
    expected = await expected_run(messages, config)
    kinds = {s[0] for s in expected.events["thread:t0"]}
    assert {"buffering-start", "buffering-end", "activation", "observation-start"} <= kinds
    worker.start()
    topics = Topics.for_prefix(worker.prefix)
    async with EventLog(kafka_bootstrap, topics.events) as log:
        await gated_conversation(kafka_bootstrap, topics.messages, log, expected, messages, config)
        assert log.signatures("thread:t0") == expected.events["thread:t0"]
