"""The coalescer behind the reader: concurrent loads share one batch, and one bad key fails alone."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

import pytest

from streams.reader.coalesce import Coalescer


class Recorder:
    """``load_many`` that records its batches; the first batch may be held until released."""

    def __init__(self, *, hold_first: bool = False, poison: int | None = None) -> None:
        self.batches: list[list[int]] = []
        self.entered = threading.Event()
        self.release = threading.Event()
        self.hold_first = hold_first
        self.poison = poison

    def __call__(self, keys: Sequence[int]) -> list[int]:
        self.batches.append(list(keys))
        if self.hold_first and len(self.batches) == 1:
            self.entered.set()
            self.release.wait()
        if self.poison in keys:
            raise ValueError(f"cannot load {self.poison}")
        return [key * 10 for key in keys]


async def test_concurrent_loads_share_one_batch_and_equal_keys_are_asked_once() -> None:
    load = Recorder()
    coalescer = Coalescer(load)
    assert await asyncio.gather(*(coalescer.load(n % 50) for n in range(100))) == [n % 50 * 10 for n in range(100)]
    assert load.batches == [list(range(50))]


async def test_keys_arriving_during_a_batch_wait_for_the_next_one_together() -> None:
    load = Recorder(hold_first=True)
    coalescer = Coalescer(load)
    first = asyncio.ensure_future(coalescer.load(1))
    await asyncio.to_thread(load.entered.wait)
    later = asyncio.gather(*(coalescer.load(n) for n in range(2, 9)))  # their tasks run before the batch returns
    load.release.set()
    assert await first == 10 and await later == [n * 10 for n in range(2, 9)]
    assert load.batches == [[1], list(range(2, 9))]


async def test_batches_are_capped() -> None:
    load = Recorder()
    coalescer = Coalescer(load, max_batch=4)
    await asyncio.gather(*(coalescer.load(n) for n in range(10)))
    assert [len(batch) for batch in load.batches] == [4, 4, 2]


async def test_a_failing_key_fails_only_its_caller() -> None:
    load = Recorder(poison=5)
    coalescer = Coalescer(load)
    got = await asyncio.gather(*(coalescer.load(n) for n in range(10)), return_exceptions=True)
    assert isinstance(got[5], ValueError)
    assert [g for n, g in enumerate(got) if n != 5] == [n * 10 for n in range(10) if n != 5]
    assert await coalescer.load(6) == 60


async def test_a_cancelled_caller_does_not_stop_the_others() -> None:
    load = Recorder(hold_first=True)
    coalescer = Coalescer(load)
    cancelled = asyncio.ensure_future(coalescer.load(1))
    kept = asyncio.ensure_future(coalescer.load(2))
    await asyncio.to_thread(load.entered.wait)
    cancelled.cancel()
    load.release.set()
    assert await kept == 20
    with pytest.raises(asyncio.CancelledError):
        await cancelled
