"""Batches taken eagerly (streams/eager_take.py), on a stand-in for the few Faust stream internals the
taker uses: the stream's queue, its processors, its passive drainer, its acks."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from streams.eager_take import take_eagerly


class _Event:
    def __init__(self, n: int) -> None:
        self.n = n
        self.acked = 0


class _Stream:
    """Values put on ``queue`` reach the processors one by one, with ``current_event`` set, as
    Faust's drainer does (a loop turn before each)."""

    def __init__(self) -> None:
        self.channel = self
        self.queue: asyncio.Queue[_Event] = asyncio.Queue()
        self._processors: list[Any] = []
        self._active_agens: set[Any] = set()
        self.enable_acks = True
        self.should_stop = False
        self.current_event: _Event | None = None
        self._drainer: asyncio.Task[None] | None = None

    def __aiter__(self) -> _Stream:
        return self

    def add_processor(self, processor: Any) -> None:
        self._processors.append(processor)

    def _enable_passive(self, channel: Any) -> None:
        self._drainer = asyncio.ensure_future(self._drain())

    async def _drain(self) -> None:
        while True:
            await asyncio.sleep(0)
            event = await self.queue.get()
            self.current_event = event
            for processor in self._processors:
                await processor(event)

    async def wait(self, event: asyncio.Event, timeout: float | None = None) -> None:
        try:
            await asyncio.wait_for(event.wait(), timeout)
        except TimeoutError:
            pass

    async def wait_for_stopped(self, event: asyncio.Event, timeout: float | None = None) -> bool:
        await self.wait(event, timeout)
        return self.should_stop

    async def ack(self, event: _Event) -> bool:
        event.acked += 1
        return True


async def _next(batches: Any, deadline_s: float = 5.0) -> list[int]:
    return [e.n for e in await asyncio.wait_for(batches.__anext__(), deadline_s)]


async def test_a_lone_event_is_handed_over_at_once_not_at_the_window() -> None:
    stream = _Stream()
    batches = take_eagerly(stream, max_=10, within=3_600)  # type: ignore[arg-type]
    stream.queue.put_nowait(_Event(1))
    started = time.monotonic()
    assert await _next(batches) == [1]
    assert time.monotonic() - started < 5
    assert stream.enable_acks is False, "the stream's own acks are off while taking"


async def test_events_delivered_together_are_one_batch_and_never_more_than_max() -> None:
    stream = _Stream()
    batches = take_eagerly(stream, max_=3, within=3_600)  # type: ignore[arg-type]
    for n in range(1, 6):
        stream.queue.put_nowait(_Event(n))
    assert await _next(batches) == [1, 2, 3]
    assert await _next(batches) == [4, 5]


async def test_a_queue_that_never_empties_closes_the_batch_at_the_window() -> None:
    stream = _Stream()
    batches = take_eagerly(stream, max_=1_000_000, within=0.05)  # type: ignore[arg-type]
    stop = asyncio.Event()

    async def flood() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            stream.queue.put_nowait(_Event(n))
            stream.queue.put_nowait(_Event(-n))  # two per turn: the drainer, one per turn, never catches up
            await asyncio.sleep(0)

    flooding = asyncio.ensure_future(flood())
    try:
        batch = await _next(batches)
    finally:
        stop.set()
        await flooding
    assert 1 < len(batch) < 1_000_000


async def test_a_batch_is_acked_when_the_caller_comes_back_and_the_stream_restored_on_close() -> None:
    stream = _Stream()
    batches = take_eagerly(stream, max_=10, within=3_600)  # type: ignore[arg-type]
    first = _Event(1)
    stream.queue.put_nowait(first)
    await _next(batches)
    assert first.acked == 0
    stream.queue.put_nowait(_Event(2))
    await _next(batches)
    assert first.acked == 1
    await batches.aclose()
    assert stream.enable_acks is True and stream._processors == []
    assert stream._drainer is not None
    stream._drainer.cancel()
