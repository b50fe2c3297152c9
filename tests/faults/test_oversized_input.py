"""Issue 18 items 1-2 against the real broker and chDB: oversized input must not stop anyone.

* A ~900 kB undecodable message (it fits the topic) is dead-lettered by the processor and by the
  sink, each letter within the record limit, and the sink goes on materialising every tenant.
* An Observer cycle over 1 MB of JSON (large ``reasoning`` parts, counted as 0 tokens) is observed,
  and the next thread on that partition is observed too (a dropped job once broke the partition's
  idempotent sequence and froze later jobs).

Each test records what it broke and what it checked (tests/faults/conftest.py).
"""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path

import aiohttp
import orjson
import pytest

from schemas.dlq import MAX_LETTER_BYTES
from schemas.messages import ChatMessage
from streams.services.worker_process import wait_http
from streams.topics import Topics
from tests.faults.conftest import FaultReport
from tests.faults.test_poison_and_model_failures import read_dead_letters
from tests.integration.pipeline import EventLog, WorkerProcess, produce, wait_until

pytestmark = pytest.mark.integration
TOKEN = "oversized-test-token"
START = 1_733_000_000_000


def _worker(bootstrap: str, tmp_path: Path, config: dict) -> WorkerProcess:
    worker = WorkerProcess(bootstrap, f"o{uuid.uuid4().hex[:8]}", config, tmp_path, partitions=1,
                           extra_env={"OM_READER_TOKENS": orjson.dumps({TOKEN: ["ra", "rb"]}).decode()})
    handle = worker.start()
    wait_http(f"http://127.0.0.1:{handle.env['OM_READER_PORT']}/healthz", handle.proc, handle.log)
    return worker


def _message(mid: str, thread: str, resource: str, at: int, parts: list[dict]) -> ChatMessage:
    return ChatMessage(id=mid, thread_id=thread, resource_id=resource, role="user", created_at=at, parts=parts)


async def _context(worker: WorkerProcess, thread: str, resource: str, wait_for: str) -> dict:
    url = (f"http://127.0.0.1:{worker.handles[0].env['OM_READER_PORT']}/v1/threads/{thread}/context"
           f"?resource_id={resource}&wait_for_message_id={wait_for}&timeout=30")
    async with aiohttp.ClientSession() as session, session.get(
            url, headers={"Authorization": f"Bearer {TOKEN}"}) as response:
        body = await response.json()
        assert response.status == 200, body
        return body


async def test_a_900_kb_undecodable_message_is_dead_lettered_within_the_limit_and_stops_no_tenant(
        kafka_bootstrap: str, tmp_path: Path, fault: FaultReport) -> None:
    worker = _worker(kafka_bootstrap, tmp_path, {})
    try:
        topics = Topics.for_prefix(worker.prefix)
        poison = b"\xff" + b"x" * 900_000
        after = _message("b-1", "tb", "rb", START, [{"type": "text", "text": "another tenant, after the poison"}])
        await produce(kafka_bootstrap, topics.messages, [("thread:ta", poison), ("thread:tb", after.to_bytes())])
        fault.broke("a 900 kB undecodable record on the messages topic, then another tenant's message")
        letters = await read_dead_letters(kafka_bootstrap, topics.dlq, 1)
        assert [letter.stage for letter in letters] == ["decode"]
        for letter in letters:
            assert letter.topic == topics.messages and letter.offset == 0 and letter.truncated
            assert letter.value_size == len(poison)
            assert letter.value_sha256 == hashlib.sha256(poison).hexdigest()
            assert len(letter.to_bytes()) <= MAX_LETTER_BYTES
        fault.checked(f"one dead letter (the processor's; the sink skips what it refuses), under "
                      f"{MAX_LETTER_BYTES} bytes, with the original's size and sha256")
        context = await _context(worker, "tb", "rb", "b-1")
        assert "another tenant, after the poison" in orjson.dumps(context).decode()
        assert len(await read_dead_letters(kafka_bootstrap, topics.dlq, 1)) == 1, "dead-lettered twice"
        proc = worker.handles[0].proc
        assert proc is not None and proc.poll() is None
        assert b"om.embedded.sink_failed" not in worker.handles[0].log.read_bytes(), "the sink never failed"
        fault.checked("the sink materialised the next tenant's message (read through the reader); "
                      "the worker never restarted")
    finally:
        worker.stop()


async def test_an_observer_job_over_1_mb_is_observed_and_the_partition_keeps_working(
        kafka_bootstrap: str, tmp_path: Path, fault: FaultReport) -> None:
    config = {"observation": {"messageTokens": 1500, "bufferTokens": False}}
    worker = _worker(kafka_bootstrap, tmp_path, config)
    try:
        topics = Topics.for_prefix(worker.prefix)
        filler = " ".join(f"budget{i} hotel flight" for i in range(60))
        thinking = {"type": "reasoning", "text": "t" * 300_000}  # 0 tokens, 300 kB
        big = [_message(f"a-{i}", "ta", "ra", START + i * 1000, [{"type": "text", "text": f"turn {i}: {filler}"},
                                                                 thinking]) for i in range(12)]
        small = [_message(f"b-{i}", "tb", "rb", START + i * 1000, [{"type": "text", "text": f"turn {i}: {filler}"}])
                 for i in range(12)]
        async with EventLog(kafka_bootstrap, topics.events) as log:
            await produce(kafka_bootstrap, topics.messages, [("thread:ta", m.to_bytes()) for m in big])
            fault.broke("a thread whose first Observer cycle carries > 1 MB of reasoning parts (0 tokens)")
            await wait_until(lambda: log.count("thread:ta", "observation-end") > 0, 90,
                             "the oversized cycle never ended")
            starts = [e for e in log.by_key["thread:ta"] if e.type == "observation-start"]
            assert not any(e.type == "observation-failed" for e in log.by_key["thread:ta"])
            fault.checked(f"observation-end for thread ta after {len(starts)} cycle(s): the job was sent "
                          "without the parts the model never sees")
            await produce(kafka_bootstrap, topics.messages, [("thread:tb", m.to_bytes()) for m in small])
            await wait_until(lambda: log.count("thread:tb", "observation-end") > 0, 90,
                             "the next thread on the partition was never observed")
        fault.checked("a later thread on the same partition was observed too")
    finally:
        worker.stop()
