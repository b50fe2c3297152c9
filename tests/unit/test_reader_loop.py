"""The embedded reader's own event loop (streams/reader/serve.py): it runs coroutines for another
loop, and bounds how long its thread waits for the interpreter lock."""

from __future__ import annotations

import asyncio
import sys
import threading

from streams.reader.serve import ReaderLoop


async def test_coroutines_run_on_the_readers_own_thread_and_the_switch_interval_is_short() -> None:
    before = sys.getswitchinterval()
    reads = ReaderLoop()
    try:
        async def where() -> str:
            return threading.current_thread().name

        assert await reads.run(where()) == "om-reader"

        async def busy() -> None:  # callbacks always ready: each iteration asks a zero-timeout poll
            for _ in range(200):
                await asyncio.sleep(0)

        await reads.run(busy())
        assert reads.selector.skipped > 0, "the reader's loop skips polls that soon follow another"
        assert threading.current_thread().name != "om-reader"
        assert sys.getswitchinterval() <= 0.001, "a read waits for the worker's Python work ~1 ms, not 5"
    finally:
        reads.close()
        sys.setswitchinterval(before)
    assert not reads._thread.is_alive()
    assert asyncio.get_running_loop() is not reads.loop
