"""Three workers share 12 partitions on the three-node cluster; the one owning most of the
conversation's partitions is killed -9 with a round in flight. Its partitions move to the two
survivors, nothing is lost or duplicated, and processing resumes within a bound, reported beside
issue 20's 2 s recovery target. Who owns what is read from each worker's ``/metrics``
(``om_consumer_lag`` lists the input partitions its consumer reads).

A round after processing resumed, the survivor reading most of the conversation's partitions (some
of them just taken over from the killed one) is stopped gracefully (SIGTERM), and the last worker
finishes the conversation. This once failed in 2 runs of 2 — the last worker never emitted a
thread's next cycle although the round's messages were committed — like the kill alone under load:
records fetched during recovery were dropped from the agents' queues (streams/flow_resume.py).
"""

from __future__ import annotations

import asyncio
import re
import time
import urllib.request
import uuid
from collections.abc import Iterable
from pathlib import Path

import pytest

from streams.harness.partition_dump import describe_partition
from streams.harness.worker_digest import worker_digest
from streams.harness.worker_log import log_entries
from streams.services.kafka_cluster import LocalKafkaCluster
from streams.services.worker_process import WorkerHandle
from tests.cluster.helpers import SERVER_DSN, partition_of
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

KILL_ROUND = 2
SESSION_MS = 10_000  # the default: three workers on a busy 2-core machine miss 6 s heartbeats and rebalance in a loop
RESUME_BOUND_S = 60.0  # the session timeout + Faust's table recovery (~10 s, issue 20) + a busy machine
METRICS_DEADLINE_S = 60.0
OWNER_DEADLINE_S = 60.0  # a rebalance that began as a fault was chosen ends well within this
OWNED = re.compile(r'om_consumer_lag\{(?=[^}]*topic="messages")[^}]*partition="(\d+)"')


async def test_three_workers_one_killed_then_one_stopped_lose_and_duplicate_nothing(
    kafka_cluster: LocalKafkaCluster, tmp_path: Path, fault: FaultReport
) -> None:
    bootstrap = kafka_cluster.bootstrap
    workers = WorkerProcess(bootstrap, f"w{uuid.uuid4().hex[:8]}", CONFIG, tmp_path, partitions=12,
                            clickhouse_dsn=SERVER_DSN, extra_env={"OM_SESSION_TIMEOUT_MS": str(SESSION_MS),
                                       "OM_LOG_LEVEL": "INFO"})  # assignments are logged at INFO, for _digest
    messages = conversation(threads=4, per_thread=32)
    config = worker_config(workers)
    expected = await expected_run(messages, config)
    keys = sorted(expected.events)
    key_partitions = {partition_of(key, workers.partitions) for key in keys}
    assert len(expected.gates["thread:t0"]) > KILL_ROUND + 3, "the conversation must outlast both faults"
    gone: dict[str, WorkerHandle] = {}
    resumed: list[str] = []
    try:
        await asyncio.to_thread(workers.start_many, 3)
        assert len({h.env["OM_WEB_PORT"] for h in workers.handles}) == 3
        async with Logs(bootstrap, workers) as logs:
            marks: dict[str, float] = {}

            async def lose_a_worker(round_number: int) -> None:
                if round_number == KILL_ROUND:
                    victim, owned = await busiest(workers, key_partitions, exclude=gone.values())
                    victim.kill()
                    marks["kill"], marks["kill_wall"] = time.monotonic(), time.time()
                    gone["killed"] = victim
                    fault.broke(f"kill -9 of worker {workers.handles.index(victim)} (of 3), owner of the "
                                f"conversation's partitions {sorted(owned)}, with round {round_number} in flight")
                elif round_number == KILL_ROUND + 1:
                    resumed.append(f"{time.monotonic() - marks['kill']:.1f} s after the kill")
                    marks["resumed_wall"] = time.time()
                elif round_number == KILL_ROUND + 2:
                    victim, owned = await busiest(workers, key_partitions, exclude=gone.values())
                    await asyncio.to_thread(victim.stop)
                    gone["stopped"] = victim
                    fault.broke(f"SIGTERM of worker {workers.handles.index(victim)}, reading the conversation's "
                                f"partitions {sorted(owned)}, a round after processing resumed")

            try:
                await gated_conversation(bootstrap, logs.topics.messages, logs.events, expected, messages, config,
                                         after_produce=lose_a_worker)
            except AssertionError as error:  # the brokers are gone once CI reports it: show the partitions now
                # the workers first: CI shows a long failure's head and tail only
                raise AssertionError("\n".join([str(error), _digest(workers),
                                                 *[await _described(bootstrap, workers.prefix, p)
                                                   for p in sorted(key_partitions)]])) from None
            assert len(resumed) == 1 and len(gone) == 2, "both faults happened"
            survivors = [h for h in workers.handles if h not in gone.values()]
            assert all(h.proc is not None and h.proc.poll() is None for h in survivors), "the last worker died"
            owned = set().union(*[await asyncio.to_thread(owned_partitions, h) for h in survivors])
            assert key_partitions <= owned, f"the last worker reads {sorted(owned)}, not all of {sorted(key_partitions)}"
            fault.checked(f"the partitions moved twice: the last worker now reads all of {sorted(key_partitions)}; "
                          f"the round in flight completed {resumed[0]} (bound {RESUME_BOUND_S:.0f} s; "
                          f"{_split(workers, gone['killed'], marks)})")
            assert float(resumed[0].split()[0]) < RESUME_BOUND_S, f"processing resumed only {resumed[0]}"
            await check_as_undisturbed(logs, expected, messages, fault)
    finally:
        workers.stop()


async def busiest(workers: WorkerProcess, key_partitions: set[int],
                  exclude: Iterable[WorkerHandle]) -> tuple[WorkerHandle, set[int]]:
    """The live worker reading the most of the conversation's partitions, and those partitions."""
    gone = list(exclude)
    deadline = time.monotonic() + OWNER_DEADLINE_S
    while True:  # a rebalance under way (a late one after a fault) shows every worker owning nothing
        alive = [h for h in workers.handles if h not in gone and h.proc is not None and h.proc.poll() is None]
        owned = [(await asyncio.to_thread(owned_partitions, h)) & key_partitions for h in alive]
        most = max(range(len(alive)), key=lambda i: len(owned[i]))
        if owned[most] or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.2)
    assert owned[most], f"no live worker reads any of {sorted(key_partitions)} after {OWNER_DEADLINE_S:.0f} s"
    return alive[most], owned[most]


async def _described(bootstrap: str, prefix: str, partition: int) -> str:
    try:
        return await describe_partition(bootstrap, prefix, partition)
    except Exception as error:  # noqa: BLE001 - the dump must never hide the failure it explains
        return f"partition {partition}: not described ({error!r})"


def _split(workers: WorkerProcess, killed: WorkerHandle, marks: dict[str, float]) -> str:
    """The survivors learn of a kill only when its session expires; from their logs, how long that
    took and how long the rebalance it began took to the round's completion (issue 20's 2 s target
    is for the second part: a worker that gains partitions in a rebalance)."""
    assigned = [e["ts"] for h in workers.handles if h is not killed for e in log_entries(h.log)
                if e.get("event", "").startswith("Setting newly assigned partitions") and e["ts"] > marks["kill_wall"]]
    if not assigned:
        return "no survivor logged a new assignment"
    first = min(assigned)
    return (f"the survivors' first new assignment came {first - marks['kill_wall']:.1f} s after the kill "
            f"(session {SESSION_MS / 1000:.0f} s), the round completed {marks['resumed_wall'] - first:.1f} s "
            "after it; issue 20's target for a worker gaining partitions: 2 s")


def _digest(workers: WorkerProcess) -> str:
    return worker_digest((f"worker {i}", h.log, h.proc is not None and h.proc.poll() is None)
                         for i, h in enumerate(workers.handles))


def owned_partitions(handle: WorkerHandle, deadline_s: float = METRICS_DEADLINE_S) -> set[int]:
    """Asked until the worker answers: one that restarts itself in place (a batch it could not
    deliver, on a starved machine) has no web server for a few seconds."""
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{handle.env['OM_WEB_PORT']}/metrics", timeout=10) as page:
                return {int(p) for p in OWNED.findall(page.read().decode())}
        except OSError:
            if time.monotonic() > deadline or (handle.proc is not None and handle.proc.poll() is not None):
                raise
            time.sleep(0.2)  # a thread of its own (asyncio.to_thread): the loop goes on meanwhile



