"""A worker's teardown (streams/harness/workers.py ``WorkerProcess.stop``) deletes its topics, and only
its own: left on the shared broker, every later client's first metadata answer lists them all."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

import pytest
from aiokafka.admin import AIOKafkaAdminClient

from streams.harness.workers import WorkerProcess
from streams.internal_topics import app_id, changelog_topic
from streams.services.kafka_topics import create_topics, delete_topics
from streams.topics import Topics

pytestmark = pytest.mark.integration


async def _topics(bootstrap: str) -> set[str]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        return set(await admin.list_topics())
    finally:
        await admin.close()


async def test_stop_deletes_the_workers_topics_and_no_other(kafka_bootstrap: str, tmp_path: Path) -> None:
    prefix = f"h{uuid.uuid4().hex[:8]}"
    mine = [*Topics.for_prefix(prefix).all(), changelog_topic(app_id(prefix, "all"))]
    others = [f"{prefix}x.messages.v1", f"other.{prefix}.v1"]  # a longer prefix, the prefix elsewhere
    await create_topics(kafka_bootstrap, [*mine, *others], partitions=1)
    try:
        assert set(mine) <= await _topics(kafka_bootstrap)
        WorkerProcess(kafka_bootstrap, prefix, {}, tmp_path).stop()
        # The deletion is accepted once the controller has it; the broker's metadata cache, which
        # answers the listing, catches up a moment later (a clean-clone run listed them once more).
        deadline = time.monotonic() + 10
        while set(mine) & (left := await _topics(kafka_bootstrap)):
            assert time.monotonic() < deadline, f"still listed 10 s after stop(): {sorted(set(mine) & left)}"
            await asyncio.sleep(0.05)
        assert set(others) <= left
    finally:
        await delete_topics(kafka_bootstrap, [*mine, *others])
