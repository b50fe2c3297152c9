"""Issue 20 item 1: the consumer hands a record to its streams without a task per record, and a
handoff that has to wait still loses to the flow's suspension, as in Faust (streams/fetch_handoff.py)."""

from __future__ import annotations

import asyncio
import warnings

import pytest
from mode import Service

from streams.fetch_handoff import EagerHandoff


class Consumer(EagerHandoff, Service):
    pass


async def handoff(queue: list[int], record: int, gate: asyncio.Event | None = None) -> int:
    if gate is not None:
        await gate.wait()
    queue.append(record)
    return record


async def test_a_handoff_that_need_not_wait_finishes_at_once_and_the_suspension_wait_is_closed() -> None:
    queue: list[int] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a suspension wait left unawaited would warn
        results = await Consumer().wait_first(handoff(queue, 1), asyncio.Event().wait())
    assert queue == [1] and results.results == [1] and not results.stopped


async def test_a_handoff_that_waits_finishes_when_its_wait_ends() -> None:
    queue: list[int] = []
    gate = asyncio.Event()
    waiting = asyncio.ensure_future(Consumer().wait_first(handoff(queue, 2, gate), asyncio.Event().wait()))
    await asyncio.sleep(0)
    assert not waiting.done() and queue == []
    gate.set()
    assert (await waiting).results == [2] and queue == [2]


async def test_the_flows_suspension_still_wins_over_a_waiting_handoff_and_cancels_it() -> None:
    queue: list[int] = []
    suspended, gate = asyncio.Event(), asyncio.Event()
    waiting = asyncio.ensure_future(Consumer().wait_first(handoff(queue, 3, gate), suspended.wait()))
    await asyncio.sleep(0)
    suspended.set()
    results = await waiting
    assert results.results == [True]  # the suspension's wait won
    gate.set()
    await asyncio.sleep(0)
    assert queue == []  # the handoff was cancelled, never finished


async def test_an_error_in_the_handoff_is_raised() -> None:
    async def broken() -> None:
        raise ValueError("bad record")

    with pytest.raises(ValueError):
        await Consumer().wait_first(broken(), asyncio.Event().wait())


async def test_a_stopped_consumers_handoff_goes_through_modes_race_which_reports_the_stop() -> None:
    consumer, queue = Consumer(), []
    consumer._stopped.set()
    results = await consumer.wait_first(handoff(queue, 4), asyncio.Event().wait())
    assert results.stopped
