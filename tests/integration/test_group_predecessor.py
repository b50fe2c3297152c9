"""A worker killed -9 and started again takes its place in its groups at once — the processor's and
the embedded sink's (streams/group_predecessor.py): its predecessor's members are sent away instead
of being waited for until their sessions expire. The session here is a minute, so a restarted worker that folds a
waiting message well inside it did not wait for the dead member; the log names the outcome.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest

from schemas.messages import ChatMessage
from streams.harness.worker_log import log_entries
from streams.topics import Topics
from tests.integration.pipeline import EventLog, WorkerProcess, produce, wait_until

pytestmark = pytest.mark.integration
SESSION_MS = 60_000
WITHIN_S = 40  # well inside the dead member's session


def _message(name: str) -> ChatMessage:
    return ChatMessage(id=name, thread_id="tp", resource_id="rp", role="user", created_at=int(time.time() * 1000),
                       parts=[{"type": "text", "text": f"{name} waits for the worker"}])


def _outcomes(log: Path) -> dict[str, str]:
    return {e["group"]: e["outcome"] for e in log_entries(log) if e.get("event") == "om.group.predecessor"}


async def test_a_worker_restarted_after_kill_9_does_not_wait_for_its_dead_members_session(
        kafka_bootstrap: str, tmp_path: Path) -> None:
    worker = WorkerProcess(kafka_bootstrap, f"gp{uuid.uuid4().hex[:8]}", {}, tmp_path, partitions=1,
                           extra_env={"OM_SESSION_TIMEOUT_MS": str(SESSION_MS), "OM_LOG_LEVEL": "INFO"})
    handle = worker.start()
    try:
        topics = Topics.for_prefix(worker.prefix)
        async with EventLog(kafka_bootstrap, topics.events) as log:
            await produce(kafka_bootstrap, topics.messages, [("thread:tp", _message("before").to_bytes())])
            await wait_until(lambda: log.count("thread:tp", "status") >= 1, 60, "the first message was never folded")
            assert _outcomes(handle.log) == {}, "a first start named a predecessor"
            sink_member = tmp_path / "data" / "members" / f"{worker.prefix}-sink.0.member"
            await wait_until(sink_member.exists, 60, "the embedded sink never recorded its group member")

            worker.kill()
            await produce(kafka_bootstrap, topics.messages, [("thread:tp", _message("after").to_bytes())])
            worker.restart_killed()
            await wait_until(lambda: log.count("thread:tp", "status") >= 2, WITHIN_S,
                             "the restarted worker waited for its dead member's session")
            # the embedded sink's group too: read-your-writes is back as soon as the processor is
            await wait_until(lambda: len(_outcomes(handle.log)) == 2, WITHIN_S, "the sink named no predecessor")
        assert _outcomes(handle.log) == {f"{worker.prefix}-worker": "left", f"{worker.prefix}-sink": "left"}
    finally:
        worker.stop()
