"""How the sink closes a batch: each record converted as it comes, the batch closed when the
records stop coming, when it is full, or when every chat message in it has its fold.

A batch is up to ``max_batch`` records, each converted to its rows (or the error that refuses it):
waiting at most ``max_wait_ms`` for the first; while the batch holds only chat messages, up
to ``max_wait_ms`` after them for more (the processor's records of those messages, which
follow within tens of ms); then taking what keeps arriving within ``linger_ms``, unless
every chat message in the batch already has its fold's status (:mod:`streams.sink.fold_gaps`),
and only while the processor's records keep coming (a poll that brings chat messages alone closes
it), for no longer than ``linger_ms`` after the first of them came: on busy topics records never
stop coming, and a batch kept open for the next messages' folds (which need the processor's next
commit) held the announce of the folds it had, up to ``max_wait_ms`` (then up to ``linger_ms``, on
every read-your-writes wait of 32 busy agents: bench 8).

A batch closes as soon as the records stop coming, so a quiet pipeline's records reach the
tables one flush after they are committed, not ``max_wait_ms`` later; under load the
records that arrive while a batch is written make the next one large by themselves. A
lone message is not written alone: its row goes in with its fold's status and records, one
flush (one context row written, and the status never queued behind the message's own
flush, which used to hold up a read-your-writes wait); and once its status is there the
flush starts without the linger, which an agent waiting on it would pay."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from typing import Any

from aiokafka.structs import ConsumerRecord

from streams.sink.fold_gaps import FoldGaps
from streams.sink.rows import Rows
from streams.topics import Topics

Converted = tuple[ConsumerRecord, "Rows | Exception"]
"""A record and its rows, or the error that refuses it."""


async def collect(consumer: Any, convert: Callable[[ConsumerRecord], Rows | Exception], topics: Topics,
                  stopping: asyncio.Event, *, max_batch: int, max_wait_ms: int, linger_ms: int) -> list[Converted]:
    """The next batch from ``consumer`` (its ``getmany``), each record through ``convert``."""
    records: list[Converted] = []
    folded = False  # a record of the processor's (events, records, results) is in the batch
    gaps = FoldGaps()
    deadline = _now() + max_wait_ms / 1000
    while len(records) < max_batch and not stopping.is_set() and not gaps.closed:
        remaining_ms = math.ceil((deadline - _now()) * 1000)
        if remaining_ms <= 0:
            break
        lingering = bool(records) and folded
        wait_ms = min(remaining_ms, linger_ms) if lingering else remaining_ms
        got = await consumer.getmany(timeout_ms=wait_ms, max_records=max_batch - len(records))
        if lingering and not got:
            break
        if got and not records:  # the messages' folds get a whole max_wait, however late they came
            deadline = _now() + max_wait_ms / 1000
        came_folded = False
        for partition_records in got.values():
            for record in partition_records:
                converted = convert(record)
                records.append((record, converted))
                if isinstance(converted, Rows):
                    if record.topic == topics.messages:
                        gaps.message(converted)
                    elif record.topic == topics.events:
                        gaps.event(converted)
            came_folded = came_folded or any(r.topic != topics.messages for r in partition_records)
            if not folded and came_folded:
                folded = True  # from now on the batch closes within linger_ms, however busy the topics
                deadline = min(deadline, _now() + linger_ms / 1000)
        if lingering and not came_folded:
            break  # the processor's records stopped coming: chat messages alone do not hold the batch open
    return records


def _now() -> float:
    return time.monotonic()
