"""Options whose effect needs the real pipeline: idle buffering at turn end, and read-only memory."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from streams.sdk import OMClient
from streams.topics import Topics
from tests.integration.pipeline import EventLog, WorkerProcess, conversation

pytestmark = pytest.mark.integration


async def wait_for(log: EventLog, key: str, condition, deadline_s: float = 60.0) -> None:
    deadline = time.monotonic() + deadline_s
    while not condition(log.by_key[key]):
        assert time.monotonic() < deadline, f"{key}: condition not met; got {[e.type for e in log.by_key[key]][-8:]}"
        await asyncio.sleep(0.05)


@contextmanager
def running_worker(kafka_bootstrap: str, tmp_path: Path, config: dict) -> Iterator[WorkerProcess]:
    worker = WorkerProcess(kafka_bootstrap, f"o{uuid.uuid4().hex[:8]}", config, tmp_path)
    worker.start()
    try:
        yield worker
    finally:
        worker.stop()


def applied(message_id: str):
    return lambda events: any(e.type == "status" and e.applied_through and e.applied_through.message_id == message_id
                              for e in events)


async def test_buffer_on_idle_buffers_the_turn_when_it_ends(kafka_bootstrap: str, tmp_path: Path) -> None:
    with running_worker(kafka_bootstrap, tmp_path,
                        {"observation": {"messageTokens": 3000, "bufferOnIdle": True}}) as worker:
        messages = conversation(threads=1, per_thread=3)
        async with EventLog(kafka_bootstrap, Topics.for_prefix(worker.prefix).events) as log, \
                OMClient(worker.settings()) as client:
            await client.send_many(messages)
            await wait_for(log, "thread:t0", applied(messages[-1].id))
            assert log.count("thread:t0", "buffering-start") == 0, "below the first interval: nothing yet"
            await client.turn_end("t0", resource_id="r0")
            await wait_for(log, "thread:t0", lambda events: any(e.type == "buffering-end" for e in events))
        end = next(e for e in log.by_key["thread:t0"] if e.type == "buffering-end")
        assert end.message_ids == [m.id for m in messages]


async def test_read_only_memory_observes_nothing(kafka_bootstrap: str, tmp_path: Path) -> None:
    with running_worker(kafka_bootstrap, tmp_path,
                        {"readOnly": True, "observation": {"messageTokens": 300, "bufferTokens": False}}) as worker:
        messages = conversation(threads=1, per_thread=12)
        async with EventLog(kafka_bootstrap, Topics.for_prefix(worker.prefix).events) as log, \
                OMClient(worker.settings()) as client:
            await client.send_many(messages)
            await wait_for(log, "thread:t0", applied(messages[-1].id))
        status = [e for e in log.by_key["thread:t0"] if e.type == "status"][-1]
        assert status.windows.active.messages.tokens > status.windows.active.messages.threshold
        assert {e.type for e in log.by_key["thread:t0"]} == {"status"}, "no cycle of any kind"


async def test_om_override_lowers_one_threads_threshold_from_the_shell(kafka_bootstrap: str, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from streams.cli import app
    from streams.settings import get_settings

    with running_worker(kafka_bootstrap, tmp_path,
                        {"observation": {"messageTokens": 3000, "bufferTokens": False}}) as worker:
        messages = conversation(threads=1, per_thread=2)
        async with EventLog(kafka_bootstrap, Topics.for_prefix(worker.prefix).events) as log, \
                OMClient(worker.settings()) as client:
            await client.send_many(messages)
            await wait_for(log, "thread:t0", applied(messages[-1].id))
            assert log.count("thread:t0", "observation-start") == 0
            env = {"OM_KAFKA_BOOTSTRAP": kafka_bootstrap, "OM_TOPIC_PREFIX": worker.prefix,
                   "OM_CONFIG_FILE": str(tmp_path / "om-config.json")}
            get_settings.cache_clear()
            try:
                result = await asyncio.to_thread(
                    CliRunner().invoke, app, ["override", "t0", "--resource", "r0", "--message-tokens", "10"], env=env)
            finally:
                get_settings.cache_clear()
            assert result.exit_code == 0, result.output
            await wait_for(log, "thread:t0", lambda events: any(e.type == "observation-end" for e in events))
