"""``om run`` started before its broker (a compose file without ordering, a broker restarting as the
worker deploys): the worker waits for the broker instead of exiting, then runs undisturbed.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

import pytest

from tests.faults.conftest import FaultReport
from tests.faults.test_worker_kill import CONFIG, Logs, check_as_undisturbed
from tests.integration.kafka_helpers import private_broker
from tests.integration.pipeline import (
    WorkerProcess,
    conversation,
    expected_run,
    gated_conversation,
    wait_until,
    worker_config,
)

pytestmark = pytest.mark.integration


async def test_a_worker_started_before_its_broker_waits_for_it(tmp_path: Path, fault: FaultReport) -> None:
    broker = private_broker(tmp_path)
    workers = WorkerProcess(broker.bootstrap, f"l{uuid.uuid4().hex[:8]}", CONFIG, tmp_path, partitions=1)
    messages = conversation(threads=1, per_thread=16)  # the fault is over before the first message
    config = worker_config(workers)
    expected = await expected_run(messages, config)
    starting = asyncio.create_task(asyncio.to_thread(workers.start))  # returns once its web server answers
    log = tmp_path / "worker-0.log"
    try:
        await wait_until(lambda: log.exists() and b"kafka.unreachable" in log.read_bytes(), 60,
                         "the worker never reported the missing broker")
        assert not starting.done(), "the worker was ready, or gone, without a broker"
        fault.broke("the worker started while nothing listened on its bootstrap address")
        began = time.monotonic()
        await asyncio.to_thread(broker.start)
        fault.broke(f"the broker came up {time.monotonic() - began:.1f} s later")
        handle = await starting
        async with Logs(broker.bootstrap, workers) as logs:
            await gated_conversation(broker.bootstrap, logs.topics.messages, logs.events, expected, messages, config)
            await check_as_undisturbed(logs, expected, messages, fault)
        fault.checked("the same worker process (no restart) went on once the broker answered")
        assert handle.proc is not None and handle.proc.poll() is None
    finally:
        await asyncio.gather(starting, return_exceptions=True)
        workers.stop()
        broker.stop()
