"""Reader: ``status()`` latency with 1,000 threads read concurrently, on the real ClickHouse engine.

The rows are what the sink would write for 1,000 threads of 30 messages folded by the core (its
status events, record snapshots and the messages, converted by the sink's own row functions), so
``status()`` reads real events. The baseline is a bare ``SELECT 1`` round trip through the same
client, measured in this run, as in :mod:`bench.reader_latency`.
"""

from __future__ import annotations

import asyncio
import time

from bench.corpus import messages
from bench.reader_latency import percentiles, report, timed
from processors.config import OMConfig
from processors.machine import decide, event_key
from processors.machine import KeyState
from streams.clickhouse import connect
from streams.migrate import apply_migrations
from streams.reader import Reader
from streams.sink.rows import Rows, delta_rows, event_rows, message_rows
from streams.sink.writer import write_batch


def folded_rows(threads: int, per_thread: int) -> list[Rows]:
    """The sink's rows for the conversation folded by the core (instant model; no jobs at this size)."""
    config = OMConfig.from_mastra({})
    states: dict[str, KeyState | None] = {}
    rows: list[Rows] = []
    for offset, message in enumerate(messages(threads, per_thread, prefix="s", salt="status")):
        key = event_key(message, config)
        decision = decide(states.get(key), message, config)
        states[key] = decision.state
        rows.append(message_rows(key, message.to_bytes(), offset))
        rows.extend(event_rows(key, e.to_bytes(), offset) for e in decision.events)
        rows.extend(delta_rows(d.to_bytes()) for d in decision.deltas)
    return rows


async def main(dsn: str, threads: int, repeat: int) -> None:
    """``dsn`` may be shared with :mod:`bench.reader_latency` (chDB opens one directory per process)."""
    client = connect(dsn)
    apply_migrations(client)
    write_batch(client, folded_rows(threads, 30))
    reader = Reader(client)
    status = await reader.status("s0", "r-s0")
    assert status is not None and status.applied_through is not None, "the bench data has no status events"

    baseline = await timed(lambda: asyncio.to_thread(client.command, "SELECT 1"), repeat)
    base_p50 = percentiles(baseline)[0]
    report("baseline: SELECT 1 round trip", baseline, base_p50)
    report("status(): one thread, sequential", await timed(lambda: reader.status("s0", "r-s0"), repeat), base_p50)

    per_call: list[float] = []

    async def one(n: int) -> None:
        start = time.perf_counter()
        await reader.status(f"s{n}", f"r-s{n}")
        per_call.append((time.perf_counter() - start) * 1000)

    start = time.perf_counter()
    await asyncio.gather(*(one(n) for n in range(threads)))
    wall = time.perf_counter() - start
    report(f"status(): {threads:,} threads concurrently (each)", per_call, base_p50)
    print(f"{f'{threads:,} concurrent status reads: wall time':<44} {wall * 1000:8.1f} ms  "
          f"({threads / wall:7.0f} statuses/s)")
