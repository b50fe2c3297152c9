"""Issue 18 items 4-5 through a real worker (embedded default: real broker, chDB, the reader):
what the processor refuses is never served, and what it observed is never replaced.

The sink stores a chat message straight from the messages topic, by its record alone; the
processor may still refuse it (a thread another resource owns, an event time too far ahead) or drop
it (late), and then hides the stored row with a refusal on the records topic. Once an id is
observed, its row is the processor's observed copy, which no re-send replaces.

Each check waits until the sink has committed past the record that matters (its consumer group's
offsets), so "not served" is asserted after the sink had every chance to serve it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
import uuid
from pathlib import Path

import aiohttp
import orjson
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from schemas.dlq import DeadLetter
from schemas.messages import ChatMessage
from streams.services.worker_process import wait_http
from streams.topics import Topics
from tests.integration.pipeline import EventLog, WorkerProcess, wait_until

pytestmark = pytest.mark.integration
TOKEN_A, TOKEN_B = "refusal-token-a", "refusal-token-b"
START = 1_733_000_000_000
LATE_TOLERANCE_MS = 24 * 3_600_000
OBSERVING = {"observation": {"messageTokens": 300, "bufferTokens": False}}  # four messages make a cycle  # processors/machine/state.py: older than this after the cursor, dropped


def _worker(bootstrap: str, tmp_path: Path, config: dict) -> WorkerProcess:
    tokens = {TOKEN_A: ["ra"], TOKEN_B: ["rb"]}
    worker = WorkerProcess(bootstrap, f"r{uuid.uuid4().hex[:8]}", config, tmp_path, partitions=1,
                           extra_env={"OM_READER_TOKENS": orjson.dumps(tokens).decode()})
    handle = worker.start()
    wait_http(f"http://127.0.0.1:{handle.env['OM_READER_PORT']}/healthz", handle.proc, handle.log)
    return worker


def _message(mid: str, thread: str, resource: str, at: int, text: str) -> ChatMessage:
    return ChatMessage(id=mid, thread_id=thread, resource_id=resource, role="user", created_at=at,
                       parts=[{"type": "text", "text": text}])


async def _produce(bootstrap: str, topic: str, items: list[tuple[str, bytes]]) -> list[int]:
    """Each record's offset (the topic has one partition)."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True)
    await producer.start()
    try:
        return [(await producer.send_and_wait(topic, value, key=key.encode())).offset for key, value in items]
    finally:
        await producer.stop()


async def _topic(bootstrap: str, topic: str, at_least: int) -> list[tuple[int, bytes]]:
    """(offset, value) of a topic's committed records (partition 0): at least ``at_least``, and all of
    them up to its last stable offset then (a transaction's marker may reach it late)."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None, isolation_level="read_committed",
                                fetch_max_wait_ms=20)
    await consumer.start()
    tp = TopicPartition(topic, 0)
    found: list[tuple[int, bytes]] = []
    try:
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        deadline = time.monotonic() + 60
        while len(found) < at_least or await consumer.position(tp) < (await consumer.end_offsets([tp]))[tp]:
            assert time.monotonic() < deadline, f"{topic}: {len(found)} of at least {at_least} records"
            for records in (await consumer.getmany(timeout_ms=100)).values():
                found.extend((r.offset, r.value) for r in records)
    finally:
        await consumer.stop()
    return found


async def _records(bootstrap: str, topics: Topics, wanted: Callable[[dict], bool], count: int) -> list[tuple[int, dict]]:
    """The records-topic deltas ``wanted`` picks (offset, JSON), once ``count`` are there."""
    consumer = AIOKafkaConsumer(topics.records, bootstrap_servers=bootstrap, group_id=None,
                                auto_offset_reset="earliest", isolation_level="read_committed", fetch_max_wait_ms=20)
    await consumer.start()
    found: list[tuple[int, dict]] = []
    try:
        deadline = time.monotonic() + 60
        while len(found) < count:
            assert time.monotonic() < deadline, f"{len(found)} of {count} deltas on the records topic"
            for records in (await consumer.getmany(timeout_ms=100)).values():
                found.extend((r.offset, delta) for r in records if wanted(delta := orjson.loads(r.value)))
    finally:
        await consumer.stop()
    return found


async def _refusals(bootstrap: str, topics: Topics, count: int) -> list[tuple[int, dict]]:
    return await _records(bootstrap, topics, lambda d: d["kind"] == "message-refused", count)


async def _sink_past(bootstrap: str, worker: WorkerProcess, topic: str, offset: int) -> None:
    """Until the worker's sink has committed past ``offset`` of ``topic`` (partition 0)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        deadline = time.monotonic() + 60
        while True:
            offsets = await admin.list_consumer_group_offsets(f"{worker.prefix}-sink")
            meta = offsets.get(TopicPartition(topic, 0))
            if meta is not None and meta.offset > offset:
                return
            assert time.monotonic() < deadline, f"the sink never committed past {topic}@{offset}"
            await asyncio.sleep(0.05)
    finally:
        await admin.close()


async def _observed_thread(bootstrap: str, topics: Topics, log: EventLog) -> list[ChatMessage]:
    """Four messages of ra's thread ta, produced and observed (with :data:`OBSERVING`)."""
    now = int(time.time() * 1000) - 60_000
    filler = " ".join(f"fact{i} about the trip" for i in range(40))
    talk = [_message(f"a-{i}", "ta", "ra", now + i * 1000, f"turn {i} original: {filler}") for i in range(4)]
    await _produce(bootstrap, topics.messages, [("thread:ta", m.to_bytes()) for m in talk])
    await wait_until(lambda: log.count("thread:ta", "observation-end") > 0, 90, "no observation")
    return talk


async def _get(worker: WorkerProcess, path: str, token: str, method: str = "GET",
               body: dict | None = None) -> tuple[int, str]:
    url = f"http://127.0.0.1:{worker.handles[0].env['OM_READER_PORT']}{path}"
    async with aiohttp.ClientSession() as session, session.request(
            method, url, json=body, headers={"Authorization": f"Bearer {token}"}) as response:
        return response.status, await response.text()


async def test_refused_messages_are_dead_lettered_once_and_never_served(kafka_bootstrap: str, tmp_path: Path) -> None:
    worker = _worker(kafka_bootstrap, tmp_path, {})
    try:
        topics = Topics.for_prefix(worker.prefix)
        now = int(time.time() * 1000)
        own = _message("a-1", "ta", "ra", now, "ra's own first message")
        intruder = _message("b-1", "ta", "rb", now + 1, "rb writes into ra's thread")
        misrouted = _message("a-2", "ta", "ra", now + 2, "keyed to another thread")
        future = _message("a-3", "ta", "ra", now + 10 * 365 * 86_400_000, "dated ten years ahead")
        changed = _message("a-1", "ta", "ra", future.created_at, "a rewrite from the future")  # a-1 again
        after = _message("a-4", "ta", "ra", now + 3, "ra's message after all that")
        offsets = await _produce(kafka_bootstrap, topics.messages, [
            ("thread:ta", own.to_bytes()), ("thread:ta", intruder.to_bytes()), ("thread:tc", misrouted.to_bytes()),
            ("thread:ta", future.to_bytes()), ("thread:ta", changed.to_bytes()), ("thread:ta", after.to_bytes())])

        refusals = await _refusals(kafka_bootstrap, topics, 3)
        assert sorted((r["message_id"], r["owner"]) for _, r in refusals) == [("a-1", "ra"), ("a-3", "ra"),
                                                                               ("b-1", "rb")]
        assert [r.get("held", {}).get("id") for _, r in refusals if r["message_id"] == "a-1"] == ["a-1"]
        await _sink_past(kafka_bootstrap, worker, topics.messages, offsets[-1])
        await _sink_past(kafka_bootstrap, worker, topics.records, max(offset for offset, _ in refusals))

        status, text = await _get(worker, "/v1/threads/ta/context?resource_id=rb", TOKEN_B)
        assert status == 404 and "rb writes" not in text, "the intruder's message is served to its resource"
        status, text = await _get(worker, "/v1/threads/ta/context?resource_id=ra&wait_for_message_id=a-4&timeout=30",
                                  TOKEN_A)
        assert status == 200, text
        assert "ra's own first message" in text and "ra's message after all that" in text
        for refused in ("rb writes", "keyed to another thread", "ten years ahead", "a rewrite from the future"):
            assert refused not in text, f"{refused!r} is in ra's context"
        for token, resource in ((TOKEN_A, "ra"), (TOKEN_B, "rb")):
            status, text = await _get(worker, "/v1/recall", token, "POST",
                                      {"resource_id": resource, "threadId": "ta", "limit": 20})
            assert not any(refused in text for refused in ("rb writes", "ten years ahead", "a rewrite")), text

        letters = [DeadLetter.model_validate_json(v) for _, v in await _topic(kafka_bootstrap, topics.dlq, 4)]
        assert sorted(letter.offset for letter in letters) == offsets[1:5], "each refused record, once"
    finally:
        worker.stop()


async def test_an_id_re_sent_after_it_was_observed_keeps_the_observed_row(kafka_bootstrap: str, tmp_path: Path) -> None:
    worker = _worker(kafka_bootstrap, tmp_path, OBSERVING)
    try:
        topics = Topics.for_prefix(worker.prefix)
        async with EventLog(kafka_bootstrap, topics.events) as log:
            talk = await _observed_thread(kafka_bootstrap, topics, log)
        # a transaction's markers reach its partitions one by one: wait for the copy itself
        ((copied_at, _),) = await _records(kafka_bootstrap, topics, lambda d: d["kind"] == "message-inserted"
                                           and d.get("observed") and d["message"]["id"] == "a-0", 1)
        rewrite = _message("a-0", "ta", "ra", talk[0].created_at, "turn 0 REWRITTEN after observation")
        (offset,) = await _produce(kafka_bootstrap, topics.messages, [("thread:ta", rewrite.to_bytes())])
        await _sink_past(kafka_bootstrap, worker, topics.messages, offset)
        await _sink_past(kafka_bootstrap, worker, topics.records, copied_at)

        status, text = await _get(worker, "/v1/recall", TOKEN_A, "POST",
                                  {"resource_id": "ra", "threadId": "ta", "limit": 20})
        assert status == 200, text
        assert "turn 0 original" in text and "REWRITTEN" not in text, "the re-send replaced the observed row"
    finally:
        worker.stop()


async def test_a_late_message_the_core_drops_is_not_served_as_unobserved(kafka_bootstrap: str, tmp_path: Path) -> None:
    worker = _worker(kafka_bootstrap, tmp_path, OBSERVING)
    try:
        topics = Topics.for_prefix(worker.prefix)
        async with EventLog(kafka_bootstrap, topics.events) as log:
            now = (await _observed_thread(kafka_bootstrap, topics, log))[0].created_at
            late = _message("a-late", "ta", "ra", now - LATE_TOLERANCE_MS - 60_000, "a message from two days ago")
            last = _message("a-last", "ta", "ra", now + 10_000, "the newest message")
            offsets = await _produce(kafka_bootstrap, topics.messages,
                                     [("thread:ta", late.to_bytes()), ("thread:ta", last.to_bytes())])
            await wait_until(lambda: any(getattr(e, "applied_through", None) and e.applied_through.message_id == "a-last"
                                         for e in log.by_key["thread:ta"]), 60, "a-last never applied")
        ((refused_at, refusal),) = await _refusals(kafka_bootstrap, topics, 1)
        assert refusal["message_id"] == "a-late" and "held" not in refusal
        await _sink_past(kafka_bootstrap, worker, topics.messages, offsets[-1])
        await _sink_past(kafka_bootstrap, worker, topics.records, refused_at)

        status, text = await _get(worker, "/v1/threads/ta/context?resource_id=ra", TOKEN_A)
        assert status == 200 and "the newest message" in text, text
        assert "two days ago" not in text, "the dropped message is served as unobserved"
    finally:
        worker.stop()
