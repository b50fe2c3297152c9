"""Resource scope through the whole pipeline: two threads of one user share one record, observed by
the real worker exactly as the core observes them, and each thread's context comes from the reader.

(Resource-scope snapshots once failed to decode in the sink — ``thread_id`` None dropped on the wire —
and nothing end to end noticed; this test is the one that would.)
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from processors.context import OTHER_CONVERSATIONS_INTRO
from processors.tokens import get_counter
from streams.replay.checkpoint import CheckpointFile
from streams.replay.mastra_sources import MastraSQLiteSource
from streams.replay.runner import ReplayOptions, replay
from streams.sdk import OMClient
from streams.services.worker_process import wait_http
from streams.worker import ensure_topics
from tests import mastra_import
from tests.integration.pipeline import WorkerProcess, conversation, expected_run, run_as_the_core, worker_config

pytestmark = pytest.mark.integration

TOKEN = "resource-scope-token"
CONFIG = {"scope": "resource", "observation": {"messageTokens": 1500}, "reflection": {"observationTokens": 1200}}
MASTRA_USER = "fixture-rs-user"  # the resource of the Mastra store tests/fixtures/mastra_store/mastra-1.31-resource.db


@pytest.fixture(scope="module")
def worker(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerProcess]:
    """One worker for the module (each start costs ~10 s); the tests use different users."""
    process = WorkerProcess(kafka_bootstrap, f"rs{uuid.uuid4().hex[:8]}", CONFIG, tmp_path_factory.mktemp("rs"),
                            extra_env={"OM_READER_TOKENS": orjson.dumps({TOKEN: ["u1", MASTRA_USER]}).decode()})
    handle = process.start()
    wait_http(f"http://127.0.0.1:{handle.env['OM_READER_PORT']}/healthz", handle.proc, handle.log)
    yield process
    process.stop()


async def test_two_threads_of_one_user_share_one_observed_record(worker: WorkerProcess, kafka_bootstrap: str) -> None:
    messages = [m.model_copy(update={"resource_id": "u1"}) for m in conversation(threads=2, per_thread=60)]
    config = worker_config(worker)
    expected = await expected_run(messages, config)
    assert list(expected.events) == ["resource:u1"], "one record for the user"
    final = expected.snapshots["resource:u1"].record
    assert final.active_observations and final.generation > 0, "the conversation must observe and reflect"

    await run_as_the_core(kafka_bootstrap, worker, expected, messages, config)

    reader_url = f"http://127.0.0.1:{worker.handles[0].env['OM_READER_PORT']}"
    async with OMClient(worker.settings(), token=TOKEN, reader_url=reader_url) as client:
        for thread in ("t0", "t1"):
            mine = [m for m in messages if m.thread_id == thread]
            context = await client.context(thread, "u1", wait_for_message_id=mine[-1].id, timeout=30)
            observations = "\n".join(context.system)
            assert final.active_observations.splitlines()[-1] in observations, f"{thread}: the shared log"
            assert context.messages, f"{thread}: its unobserved tail"
            assert {m.thread_id for m in context.messages} == {thread}, "only this thread's own messages"
            assert all(m.created_at >= (final.last_observed_at or 0) for m in context.messages)
            other = "t1" if thread == "t0" else "t0"
            blocks = [s for s in context.system if s.startswith(OTHER_CONVERSATIONS_INTRO)]
            assert len(blocks) == 1, f"{thread}: one block of the user's other conversations"
            assert f'<other-conversation id="{other}">' in blocks[0] and f'id="{thread}"' not in blocks[0]
            their_last = next(m for m in reversed(messages) if m.thread_id == other).parts[0].text
            assert their_last[:200] in blocks[0], f"{thread}: {other}'s unobserved tail, for reference"
            assert context.system.index(blocks[0]) < context.system.index("<observations>")


async def test_a_resource_scoped_mastra_store_imports_one_record_and_each_thread_sees_mastras_memory(
        worker: WorkerProcess, tmp_path: Path) -> None:
    """Real Mastra's resource-scope store (two threads, per-thread cursors, one reflection): the reader's observation text is Mastra's; each thread shows its own unobserved
    messages by its own cursor and the other thread's as another conversation, as Mastra's block did.
    (Mastra 1.31 itself also put the other thread's recent messages into the actor's conversation —
    the same leak that makes it log "wrong threadId" while writing the store; the reader does not.)"""
    fixture = mastra_import.expected("mastra-1.31-resource")
    source = MastraSQLiteSource(mastra_import.FIXTURES / "mastra-1.31-resource.db")
    reader_url = f"http://127.0.0.1:{worker.handles[0].env['OM_READER_PORT']}"
    async with OMClient(worker.settings(), token=TOKEN, reader_url=reader_url) as client:
        await ensure_topics(client.settings)
        async with client.events(mastra_import.LLM_WORK, resource_id=MASTRA_USER) as work:
            summary = await replay(source, client, CheckpointFile(tmp_path / "cp.json"), get_counter(), ReplayOptions())
            tally = summary.imports
            assert tally is not None and (tally.records, tally.generations, tally.titles, tally.working_memory) == (1, 2, 2, 1)
            newest = mastra_import.newest_imported_message(source)
            probe = await mastra_import.imported_context(client, fixture["threadId"], MASTRA_USER, newest)
            assert mastra_import.observation_text(probe) == mastra_import.mastras_observation_text(fixture)
            assert probe.messages == [], "thread b's own messages are all behind its cursor"
            mastra_block = fixture["actorSystemPrompt"].split("START_OTHER_CONVERSATIONS_BLOCK")[1]
            ours = next(s for s in probe.system if s.startswith(OTHER_CONVERSATIONS_INTRO))
            assert 'id="fixture-rs-thread-a"' in mastra_block and '<other-conversation id="fixture-rs-thread-a">' in ours
            reply = next(m["text"] for m in fixture["actorConversation"] if m["text"].startswith("Reply 13:"))
            assert reply[:200] in mastra_block and reply[:200] in ours, "thread a's unobserved reply, for reference"

            other = await client.context("fixture-rs-thread-a", MASTRA_USER)
            assert mastra_import.texts(other) == [reply], "thread a: only what its own cursor left unobserved"
            assert not any(s.startswith(OTHER_CONVERSATIONS_INTRO) for s in other.system), "b has nothing unobserved"
            await mastra_import.assert_no_llm_work(work)
