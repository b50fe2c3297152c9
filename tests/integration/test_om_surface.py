"""The rest of the OM surface through one real worker: hooks, redaction, recall guidance, deletion.

The worker runs with ``OM_REDACT=true`` (redaction hook first, sink stores redacted messages) and
the test hooks of :mod:`tests.hook_fixtures` after it, observes synchronously at 300 tokens, and
has ``retrieval.instructions`` set. ClickHouse is the worker's embedded chDB, so tables are read
through its reader API (context and recall), as an agent would.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator, Iterator
from typing import Any

import aiohttp
import orjson
import pytest
from aiokafka import AIOKafkaConsumer

from processors.recall.instructions import CUSTOM_HEADING
from schemas.control import ThreadDeleted
from schemas.lifecycle import decode_event
from schemas.messages import ChatMessage, TextPart
from streams.services.worker_process import wait_http
from streams.topics import Topics
from tests.integration.pipeline import WorkerProcess, produce

pytestmark = pytest.mark.integration

TOKEN = "hooks-test-token"
RESOURCE = "r-hooks"
GUIDANCE = "Prefer the newest thread when two answers disagree."
CONFIG = {"observation": {"messageTokens": 300, "bufferTokens": False, "manageWorkingMemory": True},
          "retrieval": {"instructions": GUIDANCE, "vector": True, "embedder": "hashing"}}
HOOKS = {"before_observation": ["tests.hook_fixtures:drop_or_fail"]}
DEADLINE_S = 45.0
FILLER = ("We compared the train timetable with the ferry schedule, weighed the budget for the hotel, and agreed "
          "to book the museum tickets once the dates are settled for the whole group of travellers.")


class TopicTap:
    """Every record of some topics, raw and decoded-by-key, collected in the background."""

    def __init__(self, bootstrap: str, topics: list[str]) -> None:
        self.bootstrap, self.topics = bootstrap, topics
        self.raw: dict[str, list[bytes]] = defaultdict(list)
        self.events: dict[str, list[Any]] = defaultdict(list)

    async def __aenter__(self) -> TopicTap:
        self._consumer = AIOKafkaConsumer(*self.topics, bootstrap_servers=self.bootstrap, group_id=None,
                                          auto_offset_reset="earliest", isolation_level="read_committed",
                                          fetch_max_wait_ms=20)
        await self._consumer.start()
        self._task = asyncio.create_task(self._pump())
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        await self._consumer.stop()

    async def _pump(self) -> None:
        while True:
            for tp, records in (await self._consumer.getmany(timeout_ms=50)).items():
                for record in records:
                    self.raw[tp.topic].append(record.value or b"")
                    if tp.topic == self.topics[0]:
                        self.events[record.key.decode()].append(decode_event(record.value))

    async def until(self, key: str, event_type: str, *, applied: str | None = None) -> Any:
        """The first ``event_type`` event of ``key`` (for ``status``: the one that applied ``applied``)."""
        deadline = time.monotonic() + DEADLINE_S
        while True:
            for event in self.events[key]:
                if event.type == event_type and (applied is None or (
                        event.applied_through and event.applied_through.message_id == applied)):
                    return event
            assert time.monotonic() < deadline, f"{key}: no {event_type} within {DEADLINE_S}s"
            await asyncio.sleep(0.05)


@pytest.fixture(scope="module")
def worker(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerProcess]:
    process = WorkerProcess(kafka_bootstrap, f"h{uuid.uuid4().hex[:8]}", CONFIG, tmp_path_factory.mktemp("hooks"),
                            extra_env={"OM_REDACT": "true", "OM_HOOKS": orjson.dumps(HOOKS).decode(),
                                       "OM_EMBEDDER": "hashing",
                                       "OM_READER_TOKENS": orjson.dumps({TOKEN: [RESOURCE]}).decode()})
    handle = process.start()
    wait_http(f"http://127.0.0.1:{handle.env['OM_READER_PORT']}/healthz", handle.proc, handle.log)  # after migrations
    yield process
    process.stop()


@pytest.fixture
async def tap(worker: WorkerProcess, kafka_bootstrap: str) -> AsyncIterator[TopicTap]:
    topics = Topics.for_prefix(worker.prefix)
    async with TopicTap(kafka_bootstrap, [topics.events, topics.records, topics.jobs]) as tapped:
        yield tapped


def reader_url(worker: WorkerProcess) -> str:
    return f"http://127.0.0.1:{worker.handles[0].env['OM_READER_PORT']}"


def conversation(thread: str, count: int, first_sentence: str) -> list[ChatMessage]:
    start = int(time.time() * 1000) - count * 60_000
    return [ChatMessage(id=f"{thread}-m{i}", thread_id=thread, resource_id=RESOURCE,
                        role="user" if i % 2 == 0 else "assistant", created_at=start + i * 60_000,
                        parts=[TextPart(text=f"{first_sentence} {FILLER}")]) for i in range(count)]


async def send(worker: WorkerProcess, kafka_bootstrap: str, messages: list[ChatMessage]) -> None:
    topic = Topics.for_prefix(worker.prefix).messages
    await produce(kafka_bootstrap, topic, [(f"thread:{m.thread_id}", m.to_bytes()) for m in messages])


async def read(method: str, url: str, body: dict | None = None) -> str:
    async with aiohttp.ClientSession() as session, session.request(
            method, url, json=body, headers={"Authorization": f"Bearer {TOKEN}"}) as response:
        text = await response.text()
        assert response.status == 200, text
        return text


async def test_a_planted_secret_never_reaches_observations_events_or_tables(
        worker: WorkerProcess, kafka_bootstrap: str, tap: TopicTap) -> None:
    thread = f"secret-{uuid.uuid4().hex[:6]}"
    key_secret, email = f"sk-proj-{uuid.uuid4().hex}", f"jane.{uuid.uuid4().hex[:8]}@example.com"
    planted = conversation(thread, 6, f"My API key is {key_secret} and you can mail me at {email} about it.")
    await send(worker, kafka_bootstrap, planted)
    end = await tap.until(f"thread:{thread}", "observation-end")
    assert "[REDACTED:api-key]" in end.observations and "[REDACTED:email]" in end.observations
    late = conversation(thread, 1, f"Also, password={key_secret} for the staging box.")[0]
    late = late.model_copy(update={"id": f"{thread}-late", "created_at": int(time.time() * 1000)})
    await send(worker, kafka_bootstrap, [late])
    await tap.until(f"thread:{thread}", "status", applied=late.id)

    base = reader_url(worker)
    context = await read("GET", f"{base}/v1/threads/{thread}/context?wait_for_message_id={late.id}&timeout=20")
    recalled = await read("POST", f"{base}/v1/recall", {"threadId": thread, "limit": 20})
    topics = Topics.for_prefix(worker.prefix)
    events, records = b"".join(tap.raw[topics.events]), b"".join(tap.raw[topics.records])
    assert "[REDACTED:credential]" in context and "[REDACTED:api-key]" in context, "observations and the late message"
    assert recalled.count("[REDACTED:api-key]") >= len(planted), "recall reads the stored (redacted) messages"
    for secret in (key_secret, email):
        assert secret not in context and secret not in recalled
        assert secret.encode() not in events and secret.encode() not in records
    jobs = b"".join(tap.raw[topics.jobs])
    assert key_secret.encode() in jobs, "the jobs topic carries raw input (documented): redaction is in the worker"


async def test_a_hook_returning_no_messages_skips_the_observer_and_they_count_as_observed(
        worker: WorkerProcess, kafka_bootstrap: str, tap: TopicTap) -> None:
    thread = f"drop-{uuid.uuid4().hex[:6]}"
    messages = conversation(thread, 6, "Nothing in this conversation may be remembered.")
    await send(worker, kafka_bootstrap, messages)
    end = await tap.until(f"thread:{thread}", "observation-end")
    assert not (end.observations or "").strip() and end.observation_tokens == 0
    assert end.message_ids and set(end.message_ids) <= {m.id for m in messages}
    observed = set(end.message_ids)
    deadline = time.monotonic() + DEADLINE_S
    while True:  # the sink materialises the records topic on its own schedule
        context = orjson.loads(await read("GET", f"{reader_url(worker)}/v1/threads/{thread}/context"))
        remaining = {m["id"] for m in context["messages"]}
        if not remaining & observed:
            break
        assert time.monotonic() < deadline, "observed messages never left the context window"
        await asyncio.sleep(0.05)
    assert remaining == {m.id for m in messages} - observed
    assert not any("<observations>" in block for block in context["system"]), "no observation text was written"


async def test_a_raising_hook_fails_the_cycle_with_an_observation_failed_event(
        worker: WorkerProcess, kafka_bootstrap: str, tap: TopicTap) -> None:
    thread = f"fail-{uuid.uuid4().hex[:6]}"
    await send(worker, kafka_bootstrap, conversation(thread, 6, "This hook is going to refuse the batch."))
    failed = await tap.until(f"thread:{thread}", "observation-failed")
    assert failed.error == "before_observation hook tests.hook_fixtures:drop_or_fail failed: RuntimeError"
    assert not [e for e in tap.events[f"thread:{thread}"] if e.type == "observation-end"]


async def test_custom_recall_instructions_follow_the_built_in_ones(
        worker: WorkerProcess, kafka_bootstrap: str, tap: TopicTap) -> None:
    thread = f"recall-{uuid.uuid4().hex[:6]}"
    messages = conversation(thread, 6, "Let us plan the autumn trip together.")
    await send(worker, kafka_bootstrap, messages)
    await tap.until(f"thread:{thread}", "observation-end")
    context = orjson.loads(await read("GET", f"{reader_url(worker)}/v1/threads/{thread}/context?"
                                             f"wait_for_message_id={messages[-1].id}&timeout=20"))
    preamble = context["system"][0]
    assert "## Recall: reading the messages behind your memory" in preamble
    assert preamble.endswith(f"{CUSTOM_HEADING}\n{GUIDANCE}"), "custom guidance comes after the built-in text"


async def test_a_deleted_thread_leaves_the_tables_and_the_reader(
        worker: WorkerProcess, kafka_bootstrap: str, tap: TopicTap) -> None:
    thread = f"gone-{uuid.uuid4().hex[:6]}"
    messages = conversation(thread, 6, "This whole thread will be deleted later on.")
    await send(worker, kafka_bootstrap, messages)
    await tap.until(f"thread:{thread}", "observation-end")
    base = reader_url(worker)
    await read("GET", f"{base}/v1/threads/{thread}/context?wait_for_message_id={messages[-1].id}&timeout=20")
    deleted = ThreadDeleted(thread_id=thread, resource_id=RESOURCE, at=int(time.time() * 1000))
    topics = Topics.for_prefix(worker.prefix)
    await produce(kafka_bootstrap, topics.control, [(f"thread:{thread}", deleted.to_bytes())])
    deadline = time.monotonic() + DEADLINE_S
    async with aiohttp.ClientSession() as session:
        while True:  # the sink runs the deletion when it reaches the key-deleted delta
            async with session.get(f"{base}/v1/threads/{thread}/context",
                                   headers={"Authorization": f"Bearer {TOKEN}"}) as response:
                if response.status == 404:
                    break
            assert time.monotonic() < deadline, "the deleted thread is still served"
            await asyncio.sleep(0.05)
    recalled = await read("POST", f"{base}/v1/recall", {"threadId": thread, "limit": 20})
    assert messages[0].id not in recalled and "deleted later on" not in recalled


async def test_recall_search_finds_the_group_observed_from_a_conversation(
        worker: WorkerProcess, kafka_bootstrap: str, tap: TopicTap) -> None:
    thread = f"search-{uuid.uuid4().hex[:6]}"
    messages = conversation(thread, 6, "The violin recital moved to the conservatory hall.")
    await send(worker, kafka_bootstrap, messages)
    await tap.until(f"thread:{thread}", "observation-end")
    deadline = time.monotonic() + DEADLINE_S
    while True:  # the sink embeds the new group right after the record snapshot lands
        answer = orjson.loads(await read("POST", f"{reader_url(worker)}/v1/recall",
                                         {"mode": "search", "query": "violin recital conservatory hall",
                                          "limit": 20}))
        text = orjson.dumps(answer).decode()
        if thread in text:
            break
        assert time.monotonic() < deadline, f"search never found {thread}: {answer}"
        await asyncio.sleep(0.2)
    assert messages[0].id in text, "the hit names the message range it came from"


async def test_the_observer_managed_working_memory_reaches_the_context_as_its_own_block(
        worker: WorkerProcess, kafka_bootstrap: str, tap: TopicTap) -> None:
    thread = f"wm-{uuid.uuid4().hex[:6]}"
    messages = conversation(thread, 6, "My name is Ana and I live in Porto.")
    await send(worker, kafka_bootstrap, messages)
    await tap.until(f"thread:{thread}", "observation-end")
    deadline = time.monotonic() + DEADLINE_S
    while True:  # the record snapshot carrying the block lands in ClickHouse shortly after the event
        context = orjson.loads(await read("GET", f"{reader_url(worker)}/v1/threads/{thread}/context?"
                                                 f"wait_for_message_id={messages[-1].id}&timeout=20"))
        if context["system"] and context["system"][-1].startswith("<working-memory>"):
            break
        assert time.monotonic() < deadline, f"no working-memory block: {context['system'][-1:]}"
        await asyncio.sleep(0.2)
    assert any("<observations>" == block for block in context["system"][:-1]), "it comes after the observations"


async def test_a_per_thread_override_through_the_sdk_lowers_that_threads_threshold(
        worker: WorkerProcess, kafka_bootstrap: str, tap: TopicTap) -> None:
    from streams.sdk import OMClient

    thread, other = f"override-{uuid.uuid4().hex[:6]}", f"plain-{uuid.uuid4().hex[:6]}"
    short = [ChatMessage(id=f"{t}-m0", thread_id=t, resource_id=RESOURCE, role="user",
                         created_at=int(time.time() * 1000), parts=[TextPart(text="Short note about the trip.")])
             for t in (thread, other)]
    async with OMClient(worker.settings()) as client:
        await client.send_many(short)
        await tap.until(f"thread:{other}", "status", applied=short[1].id)
        await client.update_record_config(thread, {"observation": {"message_tokens": 10}}, resource_id=RESOURCE)
    await tap.until(f"thread:{thread}", "observation-end")
    assert not [e for e in tap.events[f"thread:{other}"] if e.type == "observation-start"], \
        "the override applies to its own thread only"
