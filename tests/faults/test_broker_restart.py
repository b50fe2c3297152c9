"""The broker restarting mid-stream: the worker rides it out and the outcome is an undisturbed run's.

The test runs its own broker (the session's is shared by every other test) on free ports, with the
session broker's jars, so that stopping it breaks only this test's worker. In about one run in
twenty locally, and in most CI runs, the broker takes a transactional batch while shutting down and
forgets its transaction: the worker's stall guard then restarts it in place, the restarted worker
aborts the forgotten batch before it produces (streams/hanging_txns.py), and the test says so.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from streams.services.kafka import LocalKafkaBroker
from tests.faults.conftest import FaultReport
from tests.faults.test_worker_kill import CONFIG, Logs, check_as_undisturbed
from tests.integration.kafka_helpers import private_broker
from tests.integration.pipeline import WorkerProcess, conversation, expected_run, gated_conversation, worker_config

pytestmark = pytest.mark.integration


@pytest.fixture
def own_broker(tmp_path: Path) -> Iterator[LocalKafkaBroker]:
    broker = private_broker(tmp_path)
    broker.start()
    yield broker
    broker.stop()


async def test_a_broker_restart_mid_stream_changes_nothing(
    own_broker: LocalKafkaBroker, tmp_path: Path, fault: FaultReport
) -> None:
    bootstrap = own_broker.bootstrap
    workers = WorkerProcess(bootstrap, f"b{uuid.uuid4().hex[:8]}", CONFIG, tmp_path, partitions=2)
    messages = conversation(threads=2, per_thread=30)  # rounds after the restart at round 3
    config = worker_config(workers)
    expected = await expected_run(messages, config)
    workers.start()
    restarted: list[float] = []
    try:
        async with Logs(bootstrap, workers) as logs:
            async def restart_broker(round_number: int) -> None:
                if round_number != 3:
                    return
                began = time.monotonic()
                await asyncio.to_thread(own_broker.stop)
                await asyncio.to_thread(own_broker.start)
                restarted.append(time.monotonic() - began)
                fault.broke(f"the broker stopped and restarted while a round was in flight "
                            f"({restarted[0]:.1f} s without a broker)")

            await gated_conversation(bootstrap, logs.topics.messages, logs.events, expected, messages, config,
                                     after_produce=restart_broker)
            assert restarted, "the broker was never restarted"
            assert all(h.proc is not None and h.proc.poll() is None for h in workers.handles), "the worker died"
            restarts = sum(h.log.read_bytes().count(b"om.worker.stalled") for h in workers.handles)
            if restarts:  # the broker's hanging transaction wedged the worker (streams/stall_watch.py)
                fault.checked(f"the worker's stall guard restarted it in place {restarts} time(s) after "
                              "its commits stopped reaching the restarted broker")
            aborted = sum(h.log.read_bytes().count(b"om.txn.hanging") for h in workers.handles)
            if aborted:
                fault.checked(f"the restarted worker aborted {aborted} partition(s) of a transaction the broker "
                              "forgot, before producing")
            await check_as_undisturbed(logs, expected, messages, fault)
    finally:
        workers.stop()
