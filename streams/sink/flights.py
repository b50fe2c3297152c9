"""The sink's queue of started batches (streams/sink/service.py): what a batch carries from its start
to its commit, which batches at the queue's head are written as one, and how long the queue may
gather before its write. Pure rules over the queue; the sink does the IO."""

from __future__ import annotations

from dataclasses import dataclass

from aiokafka.structs import ConsumerRecord

from streams.sink.rows import Rows
from streams.sink.writer import Prepared


@dataclass
class Flight:
    """A batch from its start to its commit; written and committed while the next ones are collected."""

    records: list[ConsumerRecord]  # all of them, committed once the rows are written
    converted: list[tuple[ConsumerRecord, Rows]]
    prepared: Prepared | None  # its start (streams/sink/writer.py); None: it starts in its write
    started: float


@dataclass
class Failed:
    group: list[Flight]
    error: Exception


def next_group(queue: list[Flight]) -> list[Flight]:
    """The batches at the head of ``queue`` written as one: those started there (a batch that was
    not, or that deletes, is written alone)."""
    group = []
    for flight in queue:
        if flight.prepared is None or flight.prepared.start is None:
            return group or [flight]
        group.append(flight)
    return group


def group_start(group: list[Flight]) -> Prepared | None:
    """What ``group`` (:func:`next_group`) is written with: its batches' starts as one, or None for
    a batch that was not started (it is alone)."""
    started = [flight.prepared for flight in group if flight.prepared is not None]
    return Prepared.merged(started) if len(started) == len(group) else None


def gather_left(queue: list[Flight], gather_ms: int, now: float) -> float:
    """Seconds the queue may still wait to be written (``now``: monotonic): until its oldest batch
    has waited ``gather_ms``; none once a batch in it has a key waiting on a recompute after the
    inserts (a wait on it waits for the write), or was not started."""
    if not gather_ms or not queue:
        return 0.0
    if any(f.prepared is None or f.prepared.start is None or f.prepared.start.recomputed for f in queue):
        return 0.0
    return gather_ms / 1000 - (now - queue[0].started)
