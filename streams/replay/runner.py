"""Replaying a source into the messages topic: batched, acknowledged, checkpointed, paced.

Messages go out through :meth:`OMClient.send_many` in source order — keyed by lookup key, so each
thread's order survives on its partition — with their original ids and timestamps. After each
acknowledged batch the checkpoint advances; the pipeline then observes lazily, like any thread
that crossed its threshold (spec: migrating existing threads).

A Mastra store with OM records is imported first: each record, with its threads' messages, as
``record-import`` parts on the control topic (:mod:`.mastra_om`), checkpointed per acknowledged key;
the pipeline continues from Mastra's memory instead of observing those threads again. A record whose
scope differs from the pipeline's is refused before anything is sent. ``dry_run`` reads and tallies
everything and sends nothing.
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
from schemas.record_import import RecordImport
from streams.replay.checkpoint import CheckpointFile, Progress
from streams.replay.mastra_om import ImportTally
from streams.replay.source import ReplayInputError, ReplaySource
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
    dry_run: bool = False  # read, convert and tally everything; send nothing, save no checkpoint


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
    imports: ImportTally | None = None  # what the OM import carried (Mastra stores with OM records)
    import_parts_sent: int = 0

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


async def replay(source: ReplaySource, client: OMClient | None, checkpoints: CheckpointFile, counter: TokenCounter,
                 options: ReplayOptions = ReplayOptions(), progress: ReplayProgress | None = None) -> ReplaySummary:
    """``client`` may be None only with ``options.dry_run``."""
    prefix = client.topics.messages if client is not None else "dry-run"
    key = f"{prefix}|{source.identity}"
    saved = checkpoints.load(key, source.fingerprint())
    start = 0 if options.restart else saved.position
    summary = ReplaySummary(source.identity, resumed_from=start)
    parts = _import_parts(source, client, summary, counter)
    imported = sum(len(p.observed) + len(p.unobserved) for p in parts)
    total = source.count()
    summary.total = total + imported
    if progress is not None:
        progress.start(summary.total, start)
    log.info("replay.start", extra={"source": source.identity, "total": summary.total, "resume_at": start,
                                    "import_parts": len(parts), "dry_run": options.dry_run})
    began = time.monotonic()
    await _send_imports(parts, client, checkpoints, f"{key}|import", saved.fingerprint, options, summary, progress)
    position = 0
    messages = _counted(source.messages(), summary, counter)
    for _ in islice(messages, start):  # already acknowledged in an earlier run: read, not sent
        position += 1
    size = batch_size(options)
    stopped = False
    while batch := list(islice(messages, size)):
        if not options.dry_run:
            await asyncio.sleep(pacing_delay(summary.sent, options.rate, time.monotonic() - began))
            await client.send_many(batch)  # type: ignore[union-attr]
            summary.sent += len(batch)
            checkpoints.save(key, Progress(saved.fingerprint, position + len(batch)))
        position += len(batch)
        if progress is not None:
            progress.advance(len(batch))
        if options.stop_after is not None and summary.sent >= options.stop_after:
            stopped = True
            break
    summary.completed = not stopped or next(messages, None) is None
    if summary.completed and not options.dry_run:
        checkpoints.save(key, Progress(saved.fingerprint, position, completed=True))
    summary.seconds = time.monotonic() - began
    log.info("replay.done", extra={"source": source.identity, "sent": summary.sent, "completed": summary.completed,
                                   "import_parts": summary.import_parts_sent, "seconds": round(summary.seconds, 3)})
    return summary


def _import_parts(source: ReplaySource, client: OMClient | None, summary: ReplaySummary,
                  counter: TokenCounter) -> list[RecordImport]:
    """Every import part of the source (none for sources without OM records), tallied into the summary."""
    imports = getattr(source, "imports", None)
    if imports is None:
        return []
    tally = ImportTally()
    parts = list(imports(tally))
    if not parts:
        return []
    summary.imports = tally
    if client is not None:
        for part in parts:
            if part.record is not None and part.record.scope != client.scope:
                raise ReplayInputError(
                    f"{source.identity}: OM record {part.record.source_record_id} ({part.key}) is "
                    f"{part.record.scope}-scoped but the pipeline runs scope {client.scope!r}; set "
                    f"scope: {part.record.scope} in the OM config, or replay with --messages-only")
    for part in parts:
        for message in part.observed + part.unobserved:
            summary.messages += 1
            summary.threads.add(message.thread_id)
            summary.tokens += counter.count_message(message)
    return parts


async def _send_imports(parts: list[RecordImport], client: OMClient | None, checkpoints: CheckpointFile,
                        key: str, fingerprint: str, options: ReplayOptions, summary: ReplaySummary,
                        progress: ReplayProgress | None) -> None:
    """Key by key, all parts of a key in one acknowledged send; the checkpoint counts finished parts.
    A resumed import re-sends nothing acknowledged, and a repeated part changes nothing anyway."""
    done = 0 if options.restart else checkpoints.load(key, fingerprint).position
    by_key: dict[str, list[RecordImport]] = {}
    for part in parts:
        by_key.setdefault(part.key, []).append(part)
    position = 0
    for mine in by_key.values():
        count = sum(len(p.observed) + len(p.unobserved) for p in mine)
        if position + len(mine) > done and not options.dry_run:
            await client.send_imports(mine)  # type: ignore[union-attr]
            summary.import_parts_sent += len(mine)
            summary.sent += count
            checkpoints.save(key, Progress(fingerprint, position + len(mine)))
        position += len(mine)
        if progress is not None:
            progress.advance(count)


def _counted(messages: Iterator[ChatMessage], summary: ReplaySummary, counter: TokenCounter) -> Iterator[ChatMessage]:
    """The source's messages, tallied into the summary as they are read (sent or skipped)."""
    for message in messages:
        summary.messages += 1
        summary.threads.add(message.thread_id)
        summary.tokens += counter.count_message(message)
        yield message
