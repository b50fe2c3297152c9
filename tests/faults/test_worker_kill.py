"""The runtime keeps the core's exact behaviour through a kill -9 and through a rebalance."""

from __future__ import annotations

import asyncio
import time
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

CONFIG = {"observation": {"messageTokens": 1500}, "reflection": {"observationTokens": 1200}}


@pytest.fixture
def workers(kafka_bootstrap: str, tmp_path: Path):
    group = WorkerProcess(kafka_bootstrap, f"r{uuid.uuid4().hex[:8]}", CONFIG, tmp_path, partitions=4)
    yield group
    group.stop()


async def _wait_until(condition, deadline_s: float = 60.0) -> None:
    deadline = time.monotonic() + deadline_s
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


async def test_kill_9_during_a_buffering_cycle_changes_nothing(workers: WorkerProcess, kafka_bootstrap: str) -> None:
    workers.model = "om-deterministic/observer?latency_ms=800"  # slow enough to be killed mid-call
    messages = conversation(threads=1, per_thread=70)
    config = worker_config(workers)
    expected = await expected_run(messages, config)
    assert any(s[0] == "buffering-start" for s in expected.events["thread:t0"])
    workers.start()
    topics = Topics.for_prefix(workers.prefix)
    killed = []

    async with EventLog(kafka_bootstrap, topics.events) as log:
        async def kill_mid_cycle(round_number: int) -> None:
            if killed:
                return
            before = log.count("thread:t0", "buffering-start")
            ends = log.count("thread:t0", "buffering-end")
            await _wait_until(lambda: log.count("thread:t0", "buffering-start") > before or
                              log.count("thread:t0", "buffering-end") > ends, 30)
            if log.count("thread:t0", "buffering-start") > log.count("thread:t0", "buffering-end"):
                workers.kill()
                killed.append(round_number)
                workers.start()

        await gated_conversation(kafka_bootstrap, topics.messages, log, expected, messages, config,
                                 after_produce=kill_mid_cycle)
        assert killed, "the worker was never caught mid-cycle"
        assert log.signatures("thread:t0") == expected.events["thread:t0"]


async def test_a_second_worker_joining_mid_stream_loses_and_duplicates_nothing(
    workers: WorkerProcess, kafka_bootstrap: str
) -> None:
    messages = conversation(threads=4, per_thread=80)
    config = worker_config(workers)
    expected = await expected_run(messages, config)
    workers.start()
    topics = Topics.for_prefix(workers.prefix)

    async with EventLog(kafka_bootstrap, topics.events) as log:
        async def add_worker(round_number: int) -> None:
            if round_number == 2:
                workers.start()

        await gated_conversation(kafka_bootstrap, topics.messages, log, expected, messages, config,
                                 after_produce=add_worker)
        assert len(workers.handles) == 2
        for key, events in expected.events.items():
            assert log.signatures(key) == events, key


async def test_kill_9_during_a_reflection_changes_nothing(workers: WorkerProcess, kafka_bootstrap: str) -> None:
    workers.model = "om-deterministic/observer?latency_ms=800"  # reflector calls are slow too
    messages = conversation(threads=1, per_thread=90)
    config = worker_config(workers)
    expected = await expected_run(messages, config)
    events = expected.events["thread:t0"]
    gates = expected.gates["thread:t0"]
    starts = [i for i, s in enumerate(events) if s[2] == "reflection" and s[0].endswith("-start")]
    assert starts, "the conversation must reflect"
    kill_round = next(n for n, (_, count) in enumerate(gates, 1) if count > starts[0])
    start_signature = events[starts[0]]
    caught: list[bool] = []
    workers.start()
    topics = Topics.for_prefix(workers.prefix)
    async with EventLog(kafka_bootstrap, topics.events) as log:
        async def kill_mid_reflection(round_number: int) -> None:
            if round_number != kill_round:
                return
            await _wait_until(lambda: start_signature in log.signatures("thread:t0"), 60)
            ended = {s[1] for s in log.signatures("thread:t0") if s[0].endswith(("-end", "activation"))}
            caught.append(start_signature[1] not in ended)
            workers.kill()
            workers.start()

        await gated_conversation(kafka_bootstrap, topics.messages, log, expected, messages, config,
                                 after_produce=kill_mid_reflection)
        assert caught == [True], "the worker was killed while the reflection was in flight"
        assert log.signatures("thread:t0") == events
