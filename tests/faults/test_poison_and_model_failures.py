"""Breaking the pipeline on purpose: poison records and a failing model must never stall it.

Each test records what it broke and what it checked (tests/faults/conftest.py).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

import orjson
import pytest
from aiokafka import AIOKafkaConsumer

from schemas.base import decode
from schemas.dlq import DeadLetter
from schemas.messages import ChatMessage
from streams.topics import Topics
from tests.faults.conftest import FaultReport
from tests.integration.pipeline import EventLog, WorkerProcess, conversation, produce, wait_until

pytestmark = pytest.mark.integration


def valid(mid: str, at: int, resource: str = "r1") -> ChatMessage:
    return ChatMessage(id=mid, thread_id="p1", resource_id=resource, role="user", created_at=at,
                       parts=[{"type": "text", "text": f"message {mid}"}])


async def read_dead_letters(bootstrap: str, topic: str, count: int, deadline_s: float = 60) -> list[DeadLetter]:
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=None, auto_offset_reset="earliest",
                                isolation_level="read_committed", fetch_max_wait_ms=20)
    await consumer.start()
    letters: list[DeadLetter] = []
    try:
        deadline = time.monotonic() + deadline_s
        while len(letters) < count:
            assert time.monotonic() < deadline, f"expected {count} dead letters, got {len(letters)}"
            for records in (await consumer.getmany(timeout_ms=100)).values():
                letters.extend(decode(DeadLetter, r.value) for r in records)
    finally:
        await consumer.stop()
    return letters


async def wait_applied(log: EventLog, key: str, message_id: str, deadline_s: float = 60) -> None:
    deadline = time.monotonic() + deadline_s
    while not any(e.type == "status" and e.applied_through and e.applied_through.message_id == message_id
                  for e in log.by_key[key]):
        assert time.monotonic() < deadline, f"{message_id} was never applied"
        await asyncio.sleep(0.02)


async def test_poison_records_go_to_the_dead_letter_topic_and_the_next_record_is_processed(
    kafka_bootstrap: str, tmp_path: Path, fault: FaultReport
) -> None:
    worker = WorkerProcess(kafka_bootstrap, f"f{uuid.uuid4().hex[:8]}", {}, tmp_path)
    worker.start()
    try:
        topics = Topics.for_prefix(worker.prefix)
        unknown_version = {**orjson.loads(valid("v", 1).to_bytes()), "schema_version": 99}
        no_thread = {k: v for k, v in orjson.loads(valid("n", 2).to_bytes()).items() if k != "thread_id"}
        poison = [
            ("thread:p1", b"{not json"),
            ("thread:p1", orjson.dumps(unknown_version)),
            ("thread:p1", orjson.dumps(no_thread)),
            ("thread:p1", valid("owner", 3).to_bytes()),
            ("thread:p1", valid("intruder", 4, resource="r2").to_bytes()),
            ("thread:p1", valid("good", 5).to_bytes()),
        ]
        async with EventLog(kafka_bootstrap, topics.events) as log:
            await produce(kafka_bootstrap, topics.messages, poison)
            letters = await read_dead_letters(kafka_bootstrap, topics.dlq, 4)
            await wait_applied(log, "thread:p1", "good")
        fault.broke("bad JSON, unknown schema version, missing thread_id, thread moved to another resource")
        errors = [letter.error for letter in letters]
        assert "not valid JSON" in errors[0]
        assert letters[1].field == "schema_version" and "unknown schema version 99" in errors[1]
        assert letters[2].field == "thread_id"
        assert letters[3].field == "resource_id" and "belongs to resource 'r1'" in errors[3]
        assert [letter.offset for letter in letters] == [0, 1, 2, 4]
        assert letters[0].value == b"{not json", "the original bytes are kept"
        fault.checked("4 dead letters with readable reasons and original bytes; 'good' applied after them")
    finally:
        worker.stop()


FAILING = [("429", "rate limit"), ("500", "server error"), ("503", "overload"), ("timeout", "timeout"),
           ("degenerate", "degenerate")]


async def _run_with_a_broken_model(kafka_bootstrap: str, tmp_path: Path, kind: str, done: str) -> list:
    """30 messages against a model that always answers ``kind``; the thread's events once a ``done``
    event came and every message was applied."""
    worker = WorkerProcess(kafka_bootstrap, f"f{uuid.uuid4().hex[:8]}",
                           {"observation": {"messageTokens": 1500}}, tmp_path,
                           model=f"om-deterministic/observer?fail={kind}",
                           extra_env={"OM_LLM_MAX_RETRIES": "2", "OM_LLM_RETRY_BASE_MS": "5"})
    worker.start()
    try:
        topics = Topics.for_prefix(worker.prefix)
        messages = conversation(threads=1, per_thread=30)
        async with EventLog(kafka_bootstrap, topics.events) as log:
            await produce(kafka_bootstrap, topics.messages, [("thread:t0", m.to_bytes()) for m in messages])
            await wait_applied(log, "thread:t0", messages[-1].id)
            await wait_until(lambda: log.count("thread:t0", done) > 0, 60, f"no {done} event")
        return list(log.by_key["thread:t0"])
    finally:
        worker.stop()


@pytest.mark.parametrize(("kind", "reason"), FAILING)
async def test_a_failing_model_yields_failed_events_and_never_blocks_the_thread(
    kafka_bootstrap: str, tmp_path: Path, kind: str, reason: str, fault: FaultReport
) -> None:
    events = await _run_with_a_broken_model(kafka_bootstrap, tmp_path, kind, "buffering-failed")
    failed = [e for e in events if e.type == "buffering-failed"]
    fault.broke(f"every Observer call fails ({kind}, after 2 retries); {len(failed)} buffering cycles failed")
    assert all(reason in e.error.lower() for e in failed), [e.error for e in failed]
    assert not any(e.type in ("buffering-end", "activation") for e in events)
    fault.checked(f"each failure is an event naming the cause ('{reason}'); every message was still applied")


async def test_a_malformed_answer_is_salvaged_without_its_broken_tags(
    kafka_bootstrap: str, tmp_path: Path, fault: FaultReport
) -> None:
    events = await _run_with_a_broken_model(kafka_bootstrap, tmp_path, "malformed", "buffering-end")
    fault.broke("every Observer answer is cut off: a stray closing tag, an unclosed <observations> block")
    ends = [e for e in events if e.type == "buffering-end"]
    assert all("User asked about the trip budget" in (e.observations or "") for e in ends)
    assert not any("</current-task>" in (e.observations or "") for e in ends)
    fault.checked("the observation lines were kept (as Mastra's tolerant parser does), the stray tag was not; "
                  "every message was applied")


async def test_an_empty_answer_stores_nothing_and_never_blocks_the_thread(
    kafka_bootstrap: str, tmp_path: Path, fault: FaultReport
) -> None:
    events = await _run_with_a_broken_model(kafka_bootstrap, tmp_path, "empty", "observation-end")
    fault.broke("every Observer answer is an empty <observations> block")
    assert not any(e.type in ("buffering-end", "activation") or e.type.endswith("-failed") for e in events), \
        "an empty buffering answer is no chunk and no end marker (spec §4.4), and not a failure"
    fault.checked("buffering stored no empty chunk; the messages stayed unobserved until the threshold's "
                  "synchronous observation; every message was applied")
