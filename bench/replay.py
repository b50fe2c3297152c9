"""Replay throughput: messages/s from a JSONL history into the messages topic (``streams.replay``).

Replay is how existing history enters the pipeline, so its rate bounds how fast a migration or a
backfill can go. The baseline is the broker bound measured in this run: the same records, already
encoded and keyed, sent by a bare idempotent producer; the ratio is what reading, validating,
counting, acknowledging per batch and checkpointing cost on top.
"""

from __future__ import annotations

import tempfile
import time
import uuid
from pathlib import Path

from bench.corpus import messages
from bench.worker import BOOTSTRAP, keyed
from processors.tokens import get_counter
from streams.replay.checkpoint import CheckpointFile
from streams.replay.runner import replay
from streams.replay.sources import JsonlSource
from streams.sdk.client import OMClient
from streams.settings import Settings
from streams.topics import Topics
from streams.worker import ensure_topics
from streams.harness.workers import produce


async def main(count: int) -> None:
    batch = list(messages(10, count // 10, salt="replay"))
    workdir = Path(tempfile.mkdtemp(prefix="om-bench-replay-"))
    history = workdir / "history.jsonl"
    history.write_bytes(b"\n".join(m.to_bytes() for m in batch) + b"\n")
    raw = Settings(kafka_bootstrap=BOOTSTRAP, topic_prefix=f"bench-{uuid.uuid4().hex[:8]}")
    replayed = raw.model_copy(update={"topic_prefix": f"{raw.topic_prefix}-replay"})
    for settings in (raw, replayed):
        await ensure_topics(settings)

    start = time.perf_counter()
    await produce(BOOTSTRAP, Topics.for_prefix(raw.topic_prefix).messages, keyed(batch))
    baseline = len(batch) / (time.perf_counter() - start)
    async with OMClient(replayed, scope="thread") as client:
        summary = await replay(JsonlSource(history), client, CheckpointFile(workdir / "checkpoints.json"),
                               get_counter("tokenx"))
    assert summary.completed and summary.sent == len(batch), summary
    print(f"{len(batch):,} messages of ~200 tokens, 10 threads, JSONL file → messages topic (no worker)")
    print(f"baseline: bare producer, pre-encoded   {baseline:10,.0f} msgs/s")
    print(f"replay (streams.replay, batch 500)     {summary.rate:10,.0f} msgs/s   "
          f"replay/bare {summary.rate / baseline:6.3f}")
