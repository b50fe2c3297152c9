"""A broker of the three-node cluster lost mid-round, and back: Kafka's replication promise, with
our transactions, changelogs, hanging-transaction cleanup and stall guard on top of it.

The broker killed (-9) is the one leading the events partition the worker is writing for the
conversation's first thread; replication 3 with ``min.insync.replicas=2`` lets the two others
elect new leaders and keep accepting ``acks=all`` writes, transactions and offset commits. It is
restarted a few rounds later while the conversation goes on, and must rejoin the ISR of every
partition. Checked as the fault suite checks a worker kill (tests/faults/test_worker_kill.py):
the outcome equals the core's undisturbed run.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

import pytest

from streams.app import STATE_TABLE
from streams.services.kafka_cluster import LocalKafkaCluster
from tests.cluster.helpers import (
    SERVER_DSN,
    describe,
    partition_of,
    wait_in_sync,
    wait_until_async,
)
from tests.faults.conftest import FaultReport
from tests.faults.test_worker_kill import CONFIG, Logs, check_as_undisturbed
from tests.integration.pipeline import (
    WorkerProcess,
    conversation,
    expected_run,
    gated_conversation,
    worker_config,
)

pytestmark = pytest.mark.integration

KILL_ROUND, RESTART_ROUND = 2, 4


async def test_the_leader_killed_mid_round_and_restarted_changes_nothing(
    kafka_cluster: LocalKafkaCluster, tmp_path: Path, fault: FaultReport
) -> None:
    bootstrap = kafka_cluster.bootstrap
    workers = WorkerProcess(bootstrap, f"c{uuid.uuid4().hex[:8]}", CONFIG, tmp_path, partitions=4,
                            clickhouse_dsn=SERVER_DSN)
    messages = conversation(threads=2, per_thread=30)
    config = worker_config(workers)
    expected = await expected_run(messages, config)
    assert len(expected.gates["thread:t0"]) > RESTART_ROUND, "the conversation must outlast the fault"
    workers.start()
    changelog = f"{workers.prefix}-worker-{STATE_TABLE}-changelog"
    state = await wait_until_async(lambda: describe(bootstrap, workers.prefix), lambda s: (changelog, 0) in s, 60,
                                   "Faust never created the state changelog")
    assert state and all(len(replicas) == 3 and len(isr) == 3 for _, replicas, isr in state.values()), \
        "every topic, the state changelog included, has three replicas in sync"
    fault.checked(f"the worker's {len(state)} partitions (its topics and Faust's changelog) have 3 replicas in sync")
    killed: list[int] = []
    rejoin: list[asyncio.Task] = []
    try:
        async with Logs(bootstrap, workers) as logs:
            async def break_and_heal(round_number: int) -> None:
                if round_number == KILL_ROUND:
                    killed.append(await kill_the_leader(kafka_cluster, workers, fault))
                elif round_number == RESTART_ROUND:
                    node = kafka_cluster.node(killed[0])
                    rejoin.append(asyncio.create_task(asyncio.to_thread(node.start)))
                    fault.broke(f"node {killed[0]} restarted while the conversation goes on (round {round_number})")

            await gated_conversation(bootstrap, logs.topics.messages, logs.events, expected, messages, config,
                                     after_produce=break_and_heal)
            assert killed and rejoin, "the fault never happened"
            await rejoin[0]
            took = await wait_in_sync(bootstrap, workers.prefix, killed[0], deadline_s=90)
            fault.checked(f"node {killed[0]} back in the ISR of every partition ({took:.1f} s after its start returned)")
            assert all(h.proc is not None and h.proc.poll() is None for h in workers.handles), "the worker died"
            restarts = sum(h.log.read_bytes().count(b"om.worker.stalled") for h in workers.handles)
            fault.checked(f"the worker carried on in one process ({restarts} stall-guard restart(s) in place)")
            await check_as_undisturbed(logs, expected, messages, fault)
    finally:
        workers.stop()
        if killed:  # the next cluster test needs all three nodes
            await asyncio.to_thread(kafka_cluster.node(killed[0]).start)


async def kill_the_leader(cluster: LocalKafkaCluster, workers: WorkerProcess, fault: FaultReport) -> int:
    """kill -9 of the node leading thread t0's events partition; the node id."""
    state = await describe(cluster.bootstrap, workers.prefix)
    partition = partition_of("thread:t0", workers.partitions)
    leader = state[(f"{workers.prefix}.events.v1", partition)][0]
    led = sorted(f"{topic.removeprefix(workers.prefix)}[{p}]" for (topic, p), (lead, _, _) in state.items()
                 if lead == leader and p == partition)
    began = time.monotonic()
    assert cluster.node(leader).kill(), f"node {leader} was not running"
    fault.broke(f"kill -9 of node {leader} mid-round ({time.monotonic() - began:.1f} s), the leader of thread t0's "
                f"partition {partition} on {', '.join(led)}")
    return leader
