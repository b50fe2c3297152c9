"""Shared by the cluster tests: who leads which partition of a pipeline's topics and who is in sync
(read from the cluster), and the workers' storage shape."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")
SERVER_DSN = "http://127.0.0.1:8123/om"
"""The scale-out shape: ClickHouse is a server that a separate sink and reader use, so a worker
never opens it. These tests check the topics, so none runs (and no worker pays for chDB)."""

from aiokafka.partitioner import murmur2

from streams.services.kafka_topics import partition_states


def partition_of(key: str, partitions: int) -> int:
    """The partition the producers (and Faust) put ``key`` in."""
    return (murmur2(key.encode()) & 0x7FFFFFFF) % partitions


describe = partition_states


async def wait_in_sync(bootstrap: str, prefix: str, node_id: int, deadline_s: float) -> float:
    """Until ``node_id`` is in the ISR of every partition of the prefix's topics; the seconds it took."""
    began = time.monotonic()
    while True:
        state = await describe(bootstrap, prefix)
        behind = [tp for tp, (_, _, isr) in state.items() if node_id not in isr]
        if state and not behind:
            return time.monotonic() - began
        assert time.monotonic() - began < deadline_s, (
            f"node {node_id} not back in sync within {deadline_s:.0f} s on {len(behind)} partition(s): {behind[:4]}")
        await asyncio.sleep(0.5)


async def wait_until_async(read: Callable[[], Awaitable[T]], holds: Callable[[T], bool], deadline_s: float,
                           what: str) -> T:
    """Read until ``holds(value)``; fail naming ``what`` once ``deadline_s`` has passed."""
    began = time.monotonic()
    while not holds(value := await read()):
        assert time.monotonic() - began < deadline_s, f"{what} (not within {deadline_s:.0f} s)"
        await asyncio.sleep(0.2)
    return value
