"""A worker whose commits stop landing restarts itself in place, and the outcome is an undisturbed run's.

``OM_STALL_COMMITS`` makes every commit a silent no-op, as the broker-restart bug did: the worker
goes on processing, its outputs wait in a transaction nobody ends, and nothing downstream moves.
The stall guard (streams/stall_guard.py) must see the broker's committed offsets stay behind what
the processor acknowledged, log it, and ``exec`` the worker from the last commit, dropping the
failpoint on the way.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import orjson
import pytest

from tests.faults.conftest import FaultReport
from tests.faults.test_worker_kill import CONFIG, Logs, check_as_undisturbed
from tests.integration.pipeline import WorkerProcess, conversation, expected_run, gated_conversation, worker_config

pytestmark = pytest.mark.integration


async def test_a_worker_whose_commits_stall_restarts_itself_and_changes_nothing(
    kafka_bootstrap: str, tmp_path: Path, fault: FaultReport
) -> None:
    workers = WorkerProcess(kafka_bootstrap, f"s{uuid.uuid4().hex[:8]}", CONFIG, tmp_path, partitions=2,
                            extra_env={"OM_STALL_COMMITS": "1", "OM_COMMIT_STALL_S": "4"})
    messages = conversation(threads=2, per_thread=16)  # the stall comes with the first outputs
    config = worker_config(workers)
    expected = await expected_run(messages, config)
    handle = workers.start()
    pid = handle.proc.pid if handle.proc else None
    try:
        async with Logs(kafka_bootstrap, workers) as logs:
            fault.broke("every commit of the worker silently did nothing (OM_STALL_COMMITS), so its "
                        "outputs waited in transactions nobody would end")
            await gated_conversation(kafka_bootstrap, logs.topics.messages, logs.events, expected, messages, config)
            stalls = [line for line in handle.log.read_bytes().splitlines() if b"om.worker.stalled" in line]
            assert len(stalls) == 1, f"expected one stall restart, saw {len(stalls)}"
            report = orjson.loads(stalls[0])
            assert report["level"] == "CRITICAL" and report["stalls"], report
            assert handle.proc is not None and handle.proc.poll() is None and handle.proc.pid == pid, \
                "the worker must restart in place (same pid), not die"
            fault.checked(f"the stall guard restarted the worker in place once, naming "
                          f"{', '.join(s['partition'] for s in report['stalls'])} as acknowledged but uncommitted")
            await check_as_undisturbed(logs, expected, messages, fault)
    finally:
        workers.stop()
