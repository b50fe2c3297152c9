"""Coalescing concurrent lookups into batches (DataLoader-style), so N callers cost one query, not N.

Why: every reader call was its own ClickHouse query, and the embedded engine serialises queries,
so 1,000 concurrent reads waited in line for 1,000 × a few ms of per-query work. A query for 1,000
keys costs little more than one for a single key. So a caller's key joins a queue; while no batch
is running, the queue is answered at once (a lone caller waits no longer than before), and keys that
arrive while a batch is in flight are gathered and answered together by the next one.

A batch that fails is split in halves and retried, so one key that makes the query fail fails only
its own caller; the others still get their answers.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

DEFAULT_MAX_BATCH = 256  # keys travel as query parameters (the URL for a server): keep them small


@dataclass
class _Queue(Generic[K, V]):
    waiting: dict[K, list[asyncio.Future[V]]] = field(default_factory=dict)
    worker: asyncio.Task[None] | None = None


class Coalescer(Generic[K, V]):
    """Answers ``await load(key)`` through ``load_many(keys) -> values`` (same order), run in a thread.

    One batch is in flight at a time per event loop; equal keys in a batch are asked once.
    """

    def __init__(self, load_many: Callable[[Sequence[K]], Sequence[V]], *, max_batch: int = DEFAULT_MAX_BATCH) -> None:
        self._load_many = load_many
        self._max_batch = max_batch
        self._queues: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Queue[K, V]] = weakref.WeakKeyDictionary()

    async def load(self, key: K) -> V:
        loop = asyncio.get_running_loop()
        queue = self._queues.setdefault(loop, _Queue())
        future: asyncio.Future[V] = loop.create_future()
        queue.waiting.setdefault(key, []).append(future)
        if queue.worker is None:
            queue.worker = loop.create_task(self._drain(queue))
        return await future

    async def _drain(self, queue: _Queue[K, V]) -> None:
        try:
            while queue.waiting:
                keys = list(queue.waiting)[: self._max_batch]
                batch = {key: queue.waiting.pop(key) for key in keys}
                await self._answer(batch)
        finally:
            queue.worker = None

    async def _answer(self, batch: dict[K, list[asyncio.Future[V]]]) -> None:
        keys = list(batch)
        try:
            values = await asyncio.to_thread(self._load_many, keys)
        except Exception as error:
            if len(keys) == 1:
                _settle(batch[keys[0]], error=error)
                return
            half = len(keys) // 2
            await self._answer({key: batch[key] for key in keys[:half]})
            await self._answer({key: batch[key] for key in keys[half:]})
            return
        for key, value in zip(keys, values, strict=True):
            _settle(batch[key], value=value)


def _settle(futures: list[asyncio.Future[V]], *, value: V | None = None, error: Exception | None = None) -> None:
    for future in futures:
        if future.done():  # the caller was cancelled
            continue
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)  # type: ignore[arg-type]
