"""A log past Kafka's 1 MB default through a real worker: the same events as the core, and the agent
reads it whole (streams/topics.py ``LARGE_RECORD_BYTES``).

With ``reflection.observationTokens`` high, an observation log grows to megabytes: its record snapshots,
the Observer's jobs (which carry it) and the context row the sink writes all pass the 1 MB a
default topic takes. Before the log topics took 16 MiB, the snapshot after the log passed ~1 MB could
not be sent: the Observer result was dead-lettered and the thread observed nothing more."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from schemas.messages import ChatMessage
from streams.sdk import OMClient
from streams.services.worker_process import wait_http
from tests.integration.pipeline import WorkerProcess, expected_run, run_as_the_core, worker_config

pytestmark = pytest.mark.integration

CONFIG = {"observation": {"messageTokens": 30000}, "reflection": {"observationTokens": 2_000_000}}
TOKEN = "large-log"
WORDS = ("garden invoice doctor tuesday lisbon hotel museum dinner train weekend friend project deadline review "
         "tests deploy bug fix cache kafka memory notes budget flight paint roof bakery violin tennis soup "
         "ledger harbor quartz meadow copper lantern orchid walnut saffron pebble canyon glacier falcon").split()


def _long_messages(count: int, pairs: int) -> list[ChatMessage]:
    """User messages of ~15 kB, each a new decision and a new question per sentence pair (the offline
    Observer notes them all), answered by a short reply."""
    rng, out = random.Random(5), []
    for i in range(count):
        if i % 2 == 0:
            sentences = []
            for j in range(pairs):
                a, b, c, d = rng.sample(WORDS, 4)
                sentences += [f"I chose the {a} {b} plan for {c} number {i * 1000 + j}.", f"Is the {d} {c} ready by {b} {j}?"]
            text = " ".join(sentences)
        else:
            text = f"Noted {i}."
        out.append(ChatMessage(id=f"m{i}", thread_id="t0", resource_id="r0", role="user" if i % 2 == 0 else "assistant",
                               created_at=1_733_000_000_000 + i * 60_000, parts=[{"type": "text", "text": text}]))
    return out


@pytest.fixture
def worker(kafka_bootstrap: str, tmp_path: Path) -> Iterator[WorkerProcess]:
    process = WorkerProcess(kafka_bootstrap, f"ll{uuid.uuid4().hex[:8]}", CONFIG, tmp_path,
                            extra_env={"OM_READER_TOKENS": orjson.dumps({TOKEN: ["r0"]}).decode()})
    handle = process.start()
    wait_http(f"http://127.0.0.1:{handle.env['OM_READER_PORT']}/healthz", handle.proc, handle.log)
    yield process
    process.stop()


async def test_a_log_of_megabytes_is_observed_as_the_core_observes_it_and_read_whole(
        worker: WorkerProcess, kafka_bootstrap: str) -> None:
    messages = _long_messages(80, 300)
    config = worker_config(worker)
    expected = await expected_run(messages, config)
    final = expected.snapshots["thread:t0"]
    assert len(final.to_bytes()) > 1_200_000, "the test must take records past Kafka's 1 MB default"

    await run_as_the_core(kafka_bootstrap, worker, expected, messages, config)

    reader_url = f"http://127.0.0.1:{worker.handles[0].env['OM_READER_PORT']}"
    async with OMClient(worker.settings(), token=TOKEN, reader_url=reader_url) as client:
        context = await client.context("t0", "r0", wait_for_message_id=messages[-1].id, timeout=60)
    shown = "\n".join(context.system)
    notes = [line.split(") ", 1)[1] for line in final.record.active_observations.splitlines() if ") " in line]
    assert len(shown) > 1_000_000 and notes[0] in shown and notes[-1] in shown, "the whole log, first note to last"
