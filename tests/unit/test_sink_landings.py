"""streams/sink/landings.py: a read of the tables waits for every batch collected before it, and no longer."""

import asyncio

from streams.sink.landings import Landings


async def test_nothing_collected_nothing_to_wait_for() -> None:
    await asyncio.wait_for(Landings().landed(), 1)


async def test_a_wait_ends_once_the_batches_collected_before_it_are_written_not_later_ones() -> None:
    landings = Landings()
    landings.collected()
    landings.collected()
    first = asyncio.ensure_future(landings.landed(timeout_s=30))
    await asyncio.sleep(0)
    landings.collected()  # after the read began: not its business
    second = asyncio.ensure_future(landings.landed(timeout_s=30))
    await asyncio.sleep(0)
    landings.written(1)
    await asyncio.sleep(0)
    assert not first.done() and not second.done()
    landings.written(1)
    await asyncio.wait_for(first, 1)
    assert not second.done()
    landings.written(1)
    await asyncio.wait_for(second, 1)


async def test_a_stopping_sink_releases_every_wait_and_a_stuck_one_gives_up() -> None:
    landings = Landings()
    landings.collected()
    waiting = asyncio.ensure_future(landings.landed(timeout_s=30))
    await asyncio.sleep(0)
    landings.release()
    await asyncio.wait_for(waiting, 1)
    loop = asyncio.get_running_loop()
    start = loop.time()
    await landings.landed(timeout_s=0.05)  # the write never comes (an outage): the read goes on
    assert loop.time() - start >= 0.04


async def test_a_read_that_has_to_wait_hurries_the_writer_until_it_is_written() -> None:
    hurried = []
    landings = Landings(hurry=lambda: hurried.append(1))
    await landings.landed(timeout_s=1)
    assert hurried == [] and not landings.awaited, "nothing collected: nothing to hurry"
    landings.collected()
    waiting = asyncio.ensure_future(landings.landed(timeout_s=30))
    await asyncio.sleep(0)
    assert hurried == [1] and landings.awaited, "the writer is told to stop gathering"
    landings.written(1)
    await asyncio.wait_for(waiting, 1)
    assert not landings.awaited
