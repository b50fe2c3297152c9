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
from streams.sdk import OMClient
from streams.services.worker_process import wait_http
from streams.topics import Topics
from tests.integration.pipeline import (
    EventLog,
    WorkerProcess,
    conversation,
    expected_run,
    gated_conversation,
    worker_config,
)

pytestmark = pytest.mark.integration

TOKEN = "resource-scope-token"
CONFIG = {"scope": "resource", "observation": {"messageTokens": 1500}, "reflection": {"observationTokens": 1200}}


@pytest.fixture
def worker(kafka_bootstrap: str, tmp_path: Path) -> Iterator[WorkerProcess]:
    process = WorkerProcess(kafka_bootstrap, f"rs{uuid.uuid4().hex[:8]}", CONFIG, tmp_path,
                            extra_env={"OM_READER_TOKENS": orjson.dumps({TOKEN: ["u1"]}).decode()})
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

    names = Topics.for_prefix(worker.prefix)
    async with EventLog(kafka_bootstrap, names.events) as log:
        await gated_conversation(kafka_bootstrap, names.messages, log, expected, messages, config)
        assert log.signatures("resource:u1") == expected.events["resource:u1"]

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
