"""The stop signal abandons model calls in flight, and only those (streams/call_shutdown.py)."""

from __future__ import annotations

import asyncio

import pytest

from streams.call_shutdown import CallShutdown


async def test_a_call_in_flight_is_abandoned_commits_stop_and_later_calls_do_not_start() -> None:
    shutdown = CallShutdown()
    started = asyncio.Event()

    async def slow() -> str:
        started.set()
        await asyncio.sleep(60)
        return "answer"

    running = asyncio.ensure_future(shutdown.run(slow()))
    await asyncio.wait_for(started.wait(), 5)
    shutdown.begin()
    assert await asyncio.wait_for(running, 5) is None
    assert not shutdown.commits_allowed
    assert await shutdown.run(slow()) is None  # never started: no second "started" needed


async def test_with_no_call_in_flight_the_stop_is_graceful_and_commits_go_on() -> None:
    shutdown = CallShutdown()
    assert await shutdown.run(asyncio.sleep(0, result="done")) == "done"
    shutdown.begin()
    assert shutdown.commits_allowed and await shutdown.run(asyncio.sleep(0, result="again")) == "again"


async def test_cancelling_the_agent_itself_still_cancels_it() -> None:
    shutdown = CallShutdown()
    started = asyncio.Event()

    async def slow() -> None:
        started.set()
        await asyncio.sleep(60)

    agent = asyncio.ensure_future(shutdown.run(slow()))
    await asyncio.wait_for(started.wait(), 5)
    agent.cancel()
    with pytest.raises(asyncio.CancelledError):
        await agent
