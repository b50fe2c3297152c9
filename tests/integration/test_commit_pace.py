"""Commits paced by the work (streams/commit_pace.py) and batches taken eagerly
(streams/eager_take.py), through a real broker, with the commit interval and the batch window set
to a minute: a batch with nothing behind it is folded and committed at once, the first after a start as well as one
right after another commit; while input waits behind its batches, the worker does not commit each
batch. The old fixed timer (first commit a minute after the start) cannot pass the first check, the
previous rule (a batch right after a commit waits an interval) not the second, Faust's own
``take_events`` (a batch waits for its window's tick) neither, and a committer that committed every
batch not the third.

Commits are counted from the outside: each committed transaction ends with a control record (its
commit marker) on every partition it wrote, which takes an offset that a read_committed consumer
never returns. Between two consecutive status events of one key, an offset gap is a commit."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest

from aiokafka import AIOKafkaConsumer

from schemas.lifecycle import decode_event
from schemas.messages import ChatMessage
from streams.topics import Topics
from tests.integration.pipeline import EventLog, WorkerProcess, produce, wait_until

pytestmark = pytest.mark.integration

KEY = "thread:tp"
BURST = 200


def _message(n: int) -> ChatMessage:
    return ChatMessage(id=f"m{n}", thread_id="tp", resource_id="rp", role="user",
                       created_at=int(time.time() * 1000), parts=[{"type": "text", "text": f"message {n}"}])


async def _status_offsets(bootstrap: str, topic: str, wanted: int, deadline_s: float = 40) -> list[int]:
    """Offsets of the key's first ``wanted`` committed status events, in order."""
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=None, auto_offset_reset="earliest",
                                isolation_level="read_committed")
    await consumer.start()
    try:
        offsets: list[int] = []
        deadline = time.monotonic() + deadline_s
        while len(offsets) < wanted:
            assert time.monotonic() < deadline, f"{len(offsets)} of {wanted} status events committed"
            for records in (await consumer.getmany(timeout_ms=100)).values():
                offsets += [r.offset for r in records if r.key == KEY.encode() and decode_event(r.value).type == "status"]
        return offsets[:wanted]
    finally:
        await consumer.stop()


async def test_drained_batches_commit_at_once_and_a_backlog_is_not_committed_batch_by_batch(
        kafka_bootstrap: str, tmp_path: Path) -> None:
    worker = WorkerProcess(kafka_bootstrap, f"pace{uuid.uuid4().hex[:8]}", {}, tmp_path,
                           extra_env={"OM_COMMIT_INTERVAL_MS": "60000", "OM_COMMIT_STALL_S": "0",
                                      "OM_BATCH_WITHIN_MS": "60000",
                                      "OM_BATCH_MAX": "2"})  # a backlog is many batches; a lone message fills none
    handle = worker.start()
    try:
        topics = Topics.for_prefix(worker.prefix)
        async with EventLog(kafka_bootstrap, topics.events) as log:  # read_committed: committed work only
            for n in (1, 2):  # the first after the start, then one right after that commit
                await produce(kafka_bootstrap, topics.messages, [(KEY, _message(n).to_bytes())])
                await wait_until(lambda n=n: log.count(KEY, "status") == n, 20,
                                 f"batch {n}, with nothing behind it, was not committed at once")
            await produce(kafka_bootstrap, topics.messages,
                          [(KEY, _message(n).to_bytes()) for n in range(3, 3 + BURST)])
            await wait_until(lambda: log.count(KEY, "status") == 2 + BURST, 40,
                             "the backlog's last batch drained it, and was not committed at once")
        offsets = await _status_offsets(kafka_bootstrap, topics.events, 2 + BURST)
        commits_in_burst = sum(1 for a, b in zip(offsets[2:], offsets[3:]) if b != a + 1) + 1
        assert commits_in_burst <= BURST // 10, (
            f"{commits_in_burst} commits for a backlog of {BURST} messages in batches of two: committed batch by batch")
        assert handle.proc is not None and handle.proc.poll() is None, f"the worker exited; see {handle.log}"
    finally:
        worker.stop()
