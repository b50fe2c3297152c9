"""The SDK, the CLI and replay against one real worker (processor, LLM workers, sink, reader).

One worker serves the whole module (each start costs ~10 s); every test uses its own thread and
resource ids. The worker observes synchronously at 300 tokens (async buffering off), so a
replayed multi-session conversation yields observation-end events within seconds, while the small
Mastra stores (≈150 tokens per thread) stay unobserved and their messages all remain in context.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import orjson
import pytest
from aiokafka import AIOKafkaConsumer

from processors.tokens import get_counter
from schemas.lifecycle import StatusEvent, decode_event
from schemas.messages import ChatMessage, TextPart
from streams.replay.checkpoint import CheckpointFile
from streams.replay.mastra_sources import MastraPostgresSource, MastraSQLiteSource
from streams.replay.runner import ReplayOptions, ReplaySummary, replay
from streams.sdk import OMClient, SyncOMClient
from streams.sdk.events import EventStream, topic_partitions
from streams.sdk.reader import ReaderError
from streams.services.worker_process import wait_http
from streams.settings import Settings
from streams.worker import ensure_topics
from tests.integration.pipeline import WorkerProcess
from tests import mastra_import
from tests.mastra_store import sample_store
from tests.postgres_server import PostgresServer

pytestmark = pytest.mark.integration

CONFIG = {"observation": {"messageTokens": 300, "bufferTokens": False}}
TOKEN = "sdk-test-token"
RESOURCES = ["sdk-user", "locomo-talk", "mastra-user0", "mastra-user1", "resume-user0", "resume-user1", "fixture-user",
             "fixture-pg-user", "fixture-gen-user"]
DEADLINE_S = 60.0


@pytest.fixture(scope="module")
def worker(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerProcess]:
    process = WorkerProcess(kafka_bootstrap, f"sdk{uuid.uuid4().hex[:8]}", CONFIG, tmp_path_factory.mktemp("sdk"),
                            extra_env={"OM_READER_TOKENS": orjson.dumps({TOKEN: RESOURCES}).decode()})
    handle = process.start()
    wait_http(f"http://127.0.0.1:{handle.env['OM_READER_PORT']}/healthz", handle.proc, handle.log)  # after migrations
    yield process
    process.stop()


@pytest.fixture
def settings(worker: WorkerProcess) -> Settings:
    env = worker.handles[0].env
    return worker.settings().model_copy(update={"reader_port": int(env["OM_READER_PORT"])})


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[OMClient]:
    async with OMClient(settings, token=TOKEN) as om:
        yield om


def message(mid: str, thread: str, resource: str, at: int, text: str, role: str = "user") -> ChatMessage:
    return ChatMessage(id=mid, thread_id=thread, resource_id=resource, role=role, created_at=at,
                       parts=[TextPart(text=text)])


async def until_applied(stream: EventStream, last_ids: dict[str, str]) -> dict[str, StatusEvent]:
    """Per thread, the status event saying its record folded ``last_ids[thread]`` (bounded wait)."""
    found: dict[str, StatusEvent] = {}

    async def scan() -> None:
        async for event in stream:
            applied = event.type == "status" and event.applied_through
            if applied and last_ids.get(event.thread_id) == event.applied_through.message_id:
                found[event.thread_id] = event
                if len(found) == len(last_ids):
                    return
    await asyncio.wait_for(scan(), DEADLINE_S)
    return found


async def test_sdk_send_is_observed_as_events_and_readable_through_the_reader(client: OMClient) -> None:
    thread, at = f"sdk-{uuid.uuid4().hex[:6]}", int(time.time() * 1000)
    first, second = (message(f"{thread}-1", thread, "sdk-user", at, "hello, I am planning a garden"),
                     message(f"{thread}-2", thread, "sdk-user", at + 1000, "roses or tulips?"))
    async with client.events(["status"], thread_id=thread) as stream:
        await client.send(first)
        await client.send_many([second.to_json_dict()])  # dicts work too
        await until_applied(stream, {thread: second.id})
    context = await client.context(thread, "sdk-user", wait_for_message_id=second.id, timeout=30)
    assert [m.id for m in context.messages] == [first.id, second.id]
    status = await client.status(thread, "sdk-user")
    assert status.status is not None and status.status.windows.active.messages.tokens > 0

    def blocking_twin() -> list[str]:
        with SyncOMClient(client.settings, token=TOKEN) as om:
            om.send(message(f"{thread}-3", thread, "sdk-user", at + 2000, "tulips, then."))
            return [m.id for m in om.context(thread, "sdk-user", wait_for_message_id=f"{thread}-3", timeout=30).messages]

    assert await asyncio.to_thread(blocking_twin) == [first.id, second.id, f"{thread}-3"]


async def test_a_context_right_after_send_includes_the_message_without_waiting(client: OMClient) -> None:
    """Read-your-writes from the client's own sends: no wait on the processor or the sink (issue 19)."""
    thread, at = f"ryw-{uuid.uuid4().hex[:6]}", int(time.time() * 1000)
    first = message(f"{thread}-1", thread, "sdk-user", at, "book the table for Friday")
    async with client.events(["status"], thread_id=thread) as stream:
        await client.send(first)
        await until_applied(stream, {thread: first.id})
    await client.context(thread, "sdk-user", wait_for_message_id=first.id, timeout=30)
    second = message(f"{thread}-2", thread, "sdk-user", at + 1000, "and a cake, chocolate")
    await client.send(second)
    context = await client.context(thread, "sdk-user")  # no wait: the pipeline may not have it yet
    assert [m.id for m in context.messages] == [first.id, second.id]
    assert context.chat[-1].content == "and a cake, chocolate"
    assert second.id in context.own_messages or second.id in [m.id for m in context.messages[:-1]]
    raw = await client.context(thread, "sdk-user", own_messages=False, wait_for_message_id=second.id, timeout=30)
    assert [m.id for m in raw.messages] == [first.id, second.id] and raw.own_messages == []
    assert [m.id for m in (await client.context(thread, "sdk-user")).messages] == [first.id, second.id]


async def test_the_first_turn_of_a_new_thread_reads_its_own_message_without_waiting(client: OMClient) -> None:
    """The reader does not know a brand-new thread yet (404); the client that wrote it still gets a context."""
    thread = f"first-{uuid.uuid4().hex[:6]}"
    first = message(f"{thread}-1", thread, "sdk-user", int(time.time() * 1000), "hello, a new conversation")
    await client.send(first)
    context = await client.context(thread, "sdk-user")
    assert [m.id for m in context.messages] == [first.id] and context.chat[-1].content == first.parts[0].text
    with pytest.raises(ReaderError):  # a thread nobody here wrote to is still unknown
        await client.context(f"never-{uuid.uuid4().hex[:6]}", "sdk-user")


async def test_send_and_context_shows_the_message_in_one_call_as_send_then_context_would(client: OMClient) -> None:
    """The agent's turn in one call (issue 19): its read runs while the send waits for the broker, and
    the context it returns is the one ``send`` then ``context`` give — on a new thread and after."""
    thread, at = f"one-call-{uuid.uuid4().hex[:6]}", int(time.time() * 1000)
    first = message(f"{thread}-1", thread, "sdk-user", at, "what should I plant in March?")
    context = await client.send_and_context(first)
    assert [m.id for m in context.messages] == [first.id] and context.own_messages == [first.id]
    await client.context(thread, "sdk-user", wait_for_message_id=first.id, timeout=30)
    second = message(f"{thread}-2", thread, "sdk-user", at + 1000, "and in April?")
    context = await client.send_and_context(second)
    assert [m.id for m in context.messages] == [first.id, second.id] and context.chat[-1].content == "and in April?"
    stored = await client.context(thread, "sdk-user", own_messages=False, wait_for_message_id=second.id, timeout=30)
    assert [m.id for m in stored.messages] == [first.id, second.id]
    assert stored.system == context.system and stored.chat == context.chat
    fresh = message(f"{thread}-new-1", f"{thread}-new", "sdk-user", at, "a new thread, waited on")
    waited = await client.send_and_context(fresh, wait=True, timeout=30)  # the wait began before the send landed
    assert [m.id for m in waited.messages] == [fresh.id] and waited.own_messages == []


async def om_cli(settings: Settings, *args: str) -> tuple[int, str, str]:
    env = {**os.environ, "OM_KAFKA_BOOTSTRAP": settings.kafka_bootstrap, "OM_TOPIC_PREFIX": settings.topic_prefix,
           "OM_CONFIG_FILE": str(settings.config_file), "OM_DATA_DIR": str(settings.data_dir)}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "streams.cli", *args, env=env,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), DEADLINE_S + 30)
    return proc.returncode or 0, out.decode(), err.decode()


def locomo_sample(sample_id: str) -> list[dict]:
    words = "we hiked the ridge trail then cooked pasta and talked about the new job and moving house".split()
    turns = lambda session: [  # noqa: E731
        {"speaker": "Ana" if i % 2 == 0 else "Ben", "dia_id": f"D{session}:{i + 1}",
         "text": " ".join(words[(i + j) % len(words)] for j in range(40))} for i in range(8)]
    return [{"sample_id": sample_id, "conversation": {
        "speaker_a": "Ana", "speaker_b": "Ben",
        "session_1_date_time": "10:00 am on 3 March, 2024", "session_1": turns(1),
        "session_2_date_time": "6:30 pm on 5 March, 2024", "session_2": turns(2)}}]


async def test_events_tail_shows_an_observation_end_for_a_replayed_conversation(settings: Settings, tmp_path: Path) -> None:
    sample_id = "talk"  # thread and resource: locomo-talk
    source = tmp_path / "locomo.json"
    source.write_bytes(orjson.dumps(locomo_sample(sample_id)))
    code, out, err = await om_cli(settings, "replay", str(source), "--checkpoint", str(tmp_path / "cp.json"))
    assert code == 0, err
    assert "replay summary" in out and "16" in out
    code, out, err = await om_cli(settings, "events", "tail", "--type", "observation-end", "--thread", "locomo-talk",
                                  "--from-beginning", "--limit", "1", "--timeout", str(DEADLINE_S), "--json")
    assert code == 0, err
    event = decode_event(out.strip().splitlines()[0])
    assert event.type == "observation-end" and event.thread_id == "locomo-talk"
    assert event.message_ids and all(mid.startswith(f"{sample_id}:D") for mid in event.message_ids)


async def replay_store(source: MastraSQLiteSource, client: OMClient, checkpoints: CheckpointFile,
                       **options: object) -> ReplaySummary:
    return await replay(source, client, checkpoints, get_counter(), ReplayOptions(**options))  # type: ignore[arg-type]


async def read_context_messages(client: OMClient, expected: list[ChatMessage]) -> dict[str, list[ChatMessage]]:
    found = {}
    for thread in sorted({m.thread_id for m in expected}):
        mine = [m for m in expected if m.thread_id == thread]
        context = await client.context(thread, mine[0].resource_id, wait_for_message_id=mine[-1].id, timeout=30)
        found[thread] = context.messages
    return found


async def test_mastra_sqlite_replay_yields_the_same_threads_and_messages_and_twice_adds_nothing(
        client: OMClient, tmp_path: Path) -> None:
    source = MastraSQLiteSource(sample_store(tmp_path / "mastra.db", threads=2, per_thread=6, prefix="mastra-"))
    expected = list(source.messages())
    checkpoints = CheckpointFile(tmp_path / "cp.json")
    await ensure_topics(client.settings)
    summary = await replay_store(source, client, checkpoints, batch=5)
    assert (summary.sent, len(summary.threads), summary.completed) == (12, 2, True)

    by_thread = await read_context_messages(client, expected)
    assert sorted(by_thread) == ["mastra-mt0", "mastra-mt1"]
    for thread, messages in by_thread.items():
        assert messages == [m for m in expected if m.thread_id == thread]  # ids, roles, times, parts
    threads = await client.recall({"mode": "threads"}, "mastra-user0")
    assert "mastra-mt0" in str(threads) and "mastra-mt1" not in str(threads)
    before = {t: (await client.status(t, by_thread[t][0].resource_id)).status for t in by_thread}

    async with client.events(["status"]) as stream:
        again = await replay_store(source, client, checkpoints, batch=5, restart=True)
        after = await until_applied(stream, {t: messages[-1].id for t, messages in by_thread.items()})
    assert again.sent == 12
    for thread, status in before.items():  # the records took no second copy of any message
        assert status is not None and status.applied_through.message_id == by_thread[thread][-1].id
        assert after[thread].windows.active.messages.tokens == status.windows.active.messages.tokens > 0
    assert await read_context_messages(client, expected) == by_thread


async def produced_ids(settings: Settings, topic: str, prefix: str) -> list[str]:
    """Every record on the messages topic whose id starts with ``prefix``, read to the end."""
    consumer = AIOKafkaConsumer(bootstrap_servers=settings.kafka_bootstrap, group_id=None,
                                isolation_level="read_committed", enable_auto_commit=False, auto_offset_reset="earliest")
    await consumer.start()
    try:
        partitions = await topic_partitions(settings.kafka_bootstrap, topic)
        consumer.assign(partitions)
        await consumer.seek_to_beginning(*partitions)
        ends = await consumer.end_offsets(partitions)
        ids: list[str] = []
        deadline = time.monotonic() + DEADLINE_S
        while [tp for tp in partitions if await consumer.position(tp) < ends[tp]]:
            assert time.monotonic() < deadline, "could not read the messages topic to its end"
            for records in (await consumer.getmany(timeout_ms=200)).values():
                values = [orjson.loads(record.value) for record in records]
                ids.extend(v["id"] for v in values if v.get("id", "").startswith(prefix))
        return ids
    finally:
        await consumer.stop()


async def test_an_interrupted_replay_resumes_and_completes_exactly_once(client: OMClient, tmp_path: Path) -> None:
    source = MastraSQLiteSource(sample_store(tmp_path / "resume.db", threads=2, per_thread=8, prefix="resume-"))
    expected = list(source.messages())
    checkpoints = CheckpointFile(tmp_path / "cp.json")
    await ensure_topics(client.settings)
    first = await replay_store(source, client, checkpoints, batch=4, stop_after=5)
    assert (first.sent, first.completed) == (8, False)
    assert len(await produced_ids(client.settings, client.topics.messages, "resume-")) == 8

    second = await replay_store(source, client, checkpoints, batch=4)
    assert (second.resumed_from, second.sent, second.completed) == (8, 8, True)
    on_topic = await produced_ids(client.settings, client.topics.messages, "resume-")
    assert sorted(on_topic) == sorted(m.id for m in expected)  # each exactly once
    by_thread = await read_context_messages(client, expected)
    assert sum(len(messages) for messages in by_thread.values()) == len(expected)


async def test_cli_send_then_context_status_and_recall(settings: Settings) -> None:
    thread = f"cli-{uuid.uuid4().hex[:6]}"
    reader = ("--token", TOKEN, "--url", f"http://127.0.0.1:{settings.reader_port}")
    code, out, err = await om_cli(settings, "send", "I water the basil every morning", "--thread", thread,
                                  "--resource", "sdk-user", "--id", f"{thread}-1")
    assert code == 0 and f"{thread}-1" in out, err
    code, out, err = await om_cli(settings, "context", thread, "-r", "sdk-user", "--wait-for", f"{thread}-1",
                                  "--timeout", "30", "--json", *reader)
    assert code == 0, err
    assert [m["id"] for m in orjson.loads(out)["messages"]] == [f"{thread}-1"]
    code, out, err = await om_cli(settings, "status", thread, "-r", "sdk-user", *reader)
    assert code == 0 and f"applied through message {thread}-1" in out, err
    code, out, err = await om_cli(settings, "recall", "-r", "sdk-user", "--thread", thread, *reader)
    assert code == 0 and "basil" in out, err
    code, out, err = await om_cli(settings, "status", thread, "-r", "sdk-user", "--token", "wrong",
                                  "--url", f"http://127.0.0.1:{settings.reader_port}")
    assert code == 1 and "401" in err and "OM_READER_TOKENS" in err


async def test_a_mastra_store_with_om_imports_its_memory_and_the_context_is_mastras(
        client: OMClient, tmp_path: Path) -> None:
    fixture = mastra_import.expected("mastra-1.31")
    source = MastraSQLiteSource(mastra_import.FIXTURES / "mastra-1.31.db")
    await ensure_topics(client.settings)
    async with client.events(mastra_import.LLM_WORK, thread_id=fixture["threadId"]) as work:
        summary = await replay_store(source, client, CheckpointFile(tmp_path / "cp.json"))
        assert summary.import_parts_sent == 1 and summary.imports is not None
        context = await mastra_import.imported_context(client, fixture["threadId"], fixture["resourceId"],
                                                       mastra_import.newest_imported_message(source))
        assert mastra_import.observation_text(context) == mastra_import.mastras_observation_text(fixture)
        assert mastra_import.texts(context) == mastra_import.mastras_conversation(fixture)
        await mastra_import.assert_no_llm_work(work)


async def test_a_mastra_postgresql_store_imports_through_om_replay_and_the_context_is_mastras(
        client: OMClient, settings: Settings, postgres: PostgresServer, tmp_path: Path) -> None:
    """The same conversation, written by Mastra into PostgreSQL: loaded from its dump into a real server."""
    fixture = mastra_import.expected("mastra-1.31.pg")
    dsn = postgres.database_from_dump("mastra_thread", mastra_import.FIXTURES / "mastra-1.31.pg.sql")
    await ensure_topics(client.settings)
    async with client.events(mastra_import.LLM_WORK, thread_id=fixture["threadId"]) as work:
        code, out, err = await om_cli(settings, "replay", dsn, "--checkpoint", str(tmp_path / "cp.json"))
        assert code == 0, err
        assert "1 (2 generations, 1 parts sent)" in out and "42 already observed by Mastra, 3 still unobserved" in out
        context = await mastra_import.imported_context(client, fixture["threadId"], fixture["resourceId"],
                                                       mastra_import.newest_imported_message(MastraPostgresSource(dsn)))
        assert mastra_import.observation_text(context) == mastra_import.mastras_observation_text(fixture)
        assert mastra_import.texts(context) == mastra_import.mastras_conversation(fixture)
        await mastra_import.assert_no_llm_work(work)


async def test_a_mastra_store_of_four_generations_imports_the_newest_and_the_context_is_mastras(
        client: OMClient, tmp_path: Path) -> None:
    fixture = mastra_import.expected("mastra-1.31-generations")
    assert fixture["generationCount"] == 3 and len(fixture["generations"]) == 4
    source = MastraSQLiteSource(mastra_import.FIXTURES / "mastra-1.31-generations.db")
    await ensure_topics(client.settings)
    async with client.events(mastra_import.LLM_WORK, thread_id=fixture["threadId"]) as work:
        summary = await replay_store(source, client, CheckpointFile(tmp_path / "cp.json"))
        assert summary.imports is not None and summary.imports.generations == 4
        context = await mastra_import.imported_context(client, fixture["threadId"], fixture["resourceId"],
                                                       mastra_import.newest_imported_message(source))
        assert mastra_import.observation_text(context) == mastra_import.mastras_observation_text(fixture)
        assert mastra_import.texts(context) == mastra_import.mastras_conversation(fixture)
        await mastra_import.assert_no_llm_work(work)
