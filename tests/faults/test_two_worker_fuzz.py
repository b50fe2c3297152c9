"""A seeded corpus of conversations through two workers sharing the partitions (issue 21): every
thread's lifecycle events equal the core's undisturbed run, and the lifecycle invariants
(streams/harness/lifecycle_invariants.py) hold on the events topic — 0 violations, where Mastra's
own two-process run of its lifecycle fuzz shows 2,173 on its main branch.

The threads are drawn from seeds (tests/integration/pipeline.py, ``seeded_conversation``): lengths,
pastes, tool calls and gaps vary, and they interleave by time, so both workers fold and call the
model for many threads at once while the other does the same.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from streams.harness.lifecycle_invariants import violations
from tests.cluster.helpers import SERVER_DSN
from tests.faults.conftest import FaultReport
from tests.faults.test_worker_kill import Logs, check_as_undisturbed
from tests.integration.pipeline import (
    WorkerProcess,
    expected_run,
    gated_conversation,
    seeded_conversation,
    worker_config,
)

pytestmark = pytest.mark.integration

SEEDS = range(24)
CONFIG = {"observation": {"messageTokens": 600}, "reflection": {"observationTokens": 500}}


async def test_a_seeded_corpus_through_two_workers_breaks_no_invariant(
    kafka_bootstrap: str, tmp_path: Path, fault: FaultReport
) -> None:
    workers = WorkerProcess(kafka_bootstrap, f"z{uuid.uuid4().hex[:8]}", CONFIG, tmp_path, partitions=4,
                            clickhouse_dsn=SERVER_DSN)
    messages = seeded_conversation(SEEDS)
    config = worker_config(workers)
    expected = await expected_run(messages, config)
    sent: dict[str, set[str]] = {}
    for message in messages:
        sent.setdefault(f"thread:{message.thread_id}", set()).add(message.id)
    assert not any(violations(events, sent[key]) for key, events in expected.lifecycle.items())
    try:
        await asyncio.to_thread(workers.start_many, 2)
        async with Logs(kafka_bootstrap, workers) as logs:
            await gated_conversation(kafka_bootstrap, logs.topics.messages, logs.events, expected, messages, config)
            await check_as_undisturbed(logs, expected, messages, fault)
            found = {key: violations([e for e in logs.events.by_key[key] if e.type != "status"], sent[key])
                     for key in sent}
    finally:
        workers.stop()
    broken = {key: v for key, v in found.items() if v}
    cycles = sum(len(events) for events in expected.lifecycle.values())
    fault.checked(f"{len(SEEDS)} seeded threads ({len(messages)} messages, {cycles} lifecycle events) through two "
                  f"workers: {sum(map(len, broken.values()))} invariant violations (Mastra's two-process run: 2,173)")
    assert broken == {}
