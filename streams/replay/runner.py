"""Replaying a source into the messages topic: batched, acknowledged, checkpointed, paced.

Messages go out through :meth:`OMClient.send_many` in source order — keyed by lookup key, so each
thread's order survives on its partition — with their original ids and timestamps. After each
acknowledged batch the checkpoint advances; the pipeline then observes lazily, like any thread
that crossed its threshold (spec: migrating existing threads).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Protocol

from processors.tokens import TokenCounter
from schemas.messages import ChatMessage
from streams.replay.checkpoint import CheckpointFile, Progress
from streams.replay.source import ReplaySource
from streams.sdk.client import OMClient

log = logging.getLogger(__name__)
SENDS_PER_SECOND_WHEN_PACED = 5


class ReplayProgress(Protocol):
    def start(self, total: int, done: int) -> None: ...

    def advance(self, count: int) -> None: ...


@dataclass(frozen=True)
class ReplayOptions:
    rate: float | None = None  # messages per second, None = as fast as the broker acknowledges
    batch: int = 500
    restart: bool = False  # ignore the checkpoint and send everything again (still idempotent)
    stop_after: int | None = None  # stop once this many were sent in this run (tests, partial runs)


@dataclass
class ReplaySummary:
    source: str
    total: int = 0  # messages in the source
    messages: int = 0  # read this run (sent or skipped); equals total once completed
    threads: set[str] = field(default_factory=set)
    tokens: int = 0
    sent: int = 0
    resumed_from: int = 0
    seconds: float = 0.0
    completed: bool = False

    @property
    def rate(self) -> float:
        return self.sent / self.seconds if self.seconds > 0 else 0.0


def pacing_delay(sent: int, rate: float | None, elapsed_s: float) -> float:
    """How long to wait before sending more so that ``sent`` messages took at least ``sent / rate`` s."""
    return max(0.0, sent / rate - elapsed_s) if rate else 0.0


def batch_size(options: ReplayOptions) -> int:
    """Paced runs send small batches several times a second instead of bursting a large one."""
    if options.rate:
        return max(1, min(options.batch, int(options.rate / SENDS_PER_SECOND_WHEN_PACED)))
    return options.batch


async def replay(source: ReplaySource, client: OMClient, checkpoints: CheckpointFile, counter: TokenCounter,
                 options: ReplayOptions = ReplayOptions(), progress: ReplayProgress | None = None) -> ReplaySummary:
    key = f"{client.topics.messages}|{source.identity}"
    saved = checkpoints.load(key, source.fingerprint())
    start = 0 if options.restart else saved.position
    total = source.count()
    summary = ReplaySummary(source.identity, total=total, resumed_from=start)
    if progress is not None:
        progress.start(total, start)
    log.info("replay.start", extra={"source": source.identity, "total": total, "resume_at": start})
    began = time.monotonic()
    position = 0
    messages = _counted(source.messages(), summary, counter)
    for _ in islice(messages, start):  # already acknowledged in an earlier run: read, not sent
        position += 1
    size = batch_size(options)
    stopped = False
    while batch := list(islice(messages, size)):
        await asyncio.sleep(pacing_delay(summary.sent, options.rate, time.monotonic() - began))
        await client.send_many(batch)
        position += len(batch)
        summary.sent += len(batch)
        checkpoints.save(key, Progress(saved.fingerprint, position))
        if progress is not None:
            progress.advance(len(batch))
        if options.stop_after is not None and summary.sent >= options.stop_after:
            stopped = True
            break
    summary.completed = not stopped or next(messages, None) is None
    if summary.completed:
        checkpoints.save(key, Progress(saved.fingerprint, position, completed=True))
    summary.seconds = time.monotonic() - began
    log.info("replay.done", extra={"source": source.identity, "sent": summary.sent, "completed": summary.completed,
                                   "seconds": round(summary.seconds, 3)})
    return summary


def _counted(messages: Iterator[ChatMessage], summary: ReplaySummary, counter: TokenCounter) -> Iterator[ChatMessage]:
    """The source's messages, tallied into the summary as they are read (sent or skipped)."""
    for message in messages:
        summary.messages += 1
        summary.threads.add(message.thread_id)
        summary.tokens += counter.count_message(message)
        yield message
