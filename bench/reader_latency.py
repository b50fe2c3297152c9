"""Reader latency: ``Reader.context()`` p50/p99 on the real ClickHouse engine (chDB by default).

Three scenarios, each against a baseline measured in the same run (a bare ``SELECT 1`` round trip
through the same client), so the figures compare across machines:

1. one thread with 10,000 messages and three generations (the head's observations cover all but
   the last 40 messages; earlier generations are history rows the head query must skip), read with
   one query per call (server mode) and from the embedded worker's version-checked cache;
2. 1,000 threads of 30 messages each, all read concurrently;
3. resource scope: one user's 20 threads of 30 messages, 10 of each unobserved, so a thread's
   context also shows the 19 others' unobserved messages (the other-conversations block).

Rows are written straight into the tables in the sink's row format (no broker needed), then the
keys' context rows computed from them as the sink does after a batch.

    .venv/bin/python bench/reader_latency.py [--dsn chdb:///tmp/om-bench] [--repeat 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable

import orjson

from processors.config import OMConfig
from processors.context import OTHER_CONVERSATIONS_INTRO
from streams.clickhouse import connect
from streams.migrate import apply_migrations
from streams.reader import Reader
from streams.reader.context_cache import ContextCache
from streams.sink.contexts import write_context_rows
from streams.sink.rows import COLUMNS

T0 = 1_733_000_000_000
BOUNDARY = "\n\n--- message boundary (2024-12-01T00:00:00.000Z) ---\n\n"


def _message_row(resource: str, thread: str, key: str, i: int) -> list:
    parts = orjson.dumps([{"type": "text", "text": f"message {i} of {thread} " + "lorem ipsum " * 20}]).decode()
    return [resource, thread, f"{thread}-m{i:05d}", key, "user" if i % 2 == 0 else "assistant",
            T0 + i * 60_000, parts, None, None, resource, 2 * i, 0]


def _record_row(resource: str, thread: str, key: str, generation: int, observations: str, version: int) -> list:
    row = dict.fromkeys(COLUMNS["om_records"], 0)
    row.update(resource_id=resource, lookup_key=key, generation=generation,
               record_id=f"rec-{key}-{generation}", scope=key.split(":")[0], thread_id=thread, origin_type="reflection",
               active_observations=observations, last_observed_at=None, buffered_chunk_ids=[],
               buffered_reflection=None, observed_timezone="UTC", threads="{}", thread_titles={},
               unobserved_message_ids=[], version=version)
    return [row[c] for c in COLUMNS["om_records"]]


def load_thread(client, resource: str, thread: str, messages: int, unobserved: int, generations: int,
                key: str | None = None) -> None:
    """``key``: ``resource:<id>`` loads the thread as one of a resource-scope record's threads."""
    key = key or f"thread:{thread}"
    client.insert("om_messages", [_message_row(resource, thread, key, i) for i in range(messages)],
                  column_names=list(COLUMNS["om_messages"]))
    observed = [[key, f"{thread}-m{i:05d}", f"cycle-{i // 100}", generations - 1, "", T0, i + 1]
                for i in range(messages - unobserved)]
    if observed:
        client.insert("om_message_observations", observed, column_names=list(COLUMNS["om_message_observations"]))
    cycle = "Date: Dec 1, 2024\n" + "\n".join(f"* 🔴 (10:{n % 60:02d}) fact {n}" for n in range(40))
    records = [_record_row(resource, thread, key, g, BOUNDARY.join([cycle] * (g + 2)), messages + g)
               for g in range(generations)]
    client.insert("om_records", records, column_names=list(COLUMNS["om_records"]))


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


async def timed(call: Callable[[], Awaitable[object]], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def report(name: str, samples: list[float], baseline_p50: float) -> None:
    p50, p99 = percentiles(samples)
    print(f"{name:<44} p50 {p50:8.2f} ms  p99 {p99:8.2f} ms  p50/baseline {p50 / baseline_p50:6.1f}x")


async def main(dsn: str, repeat: int) -> None:
    client = connect(dsn)
    apply_migrations(client)
    reader = Reader(client)
    load_thread(client, "bench-r", "big", messages=10_000, unobserved=40, generations=3)
    for n in range(1000):
        load_thread(client, f"bench-r{n % 50}", f"small{n}", messages=30, unobserved=10, generations=1)
    write_context_rows(client, [("bench-r", "thread:big"), *((f"bench-r{n % 50}", f"thread:small{n}") for n in range(1000))])

    baseline = await timed(lambda: asyncio.to_thread(client.command, "SELECT 1"), repeat)
    report("baseline: SELECT 1 round trip", baseline, percentiles(baseline)[0])
    base_p50 = percentiles(baseline)[0]

    context = await reader.context("big", "bench-r")
    assert len(context.messages) == 40 and len(context.system) == 2 + 4, "the bench data is not what it claims"
    report("context(): 10k messages, 3 generations", await timed(lambda: reader.context("big", "bench-r"), repeat),
           base_p50)
    cached = Reader(client, cache=ContextCache())  # the embedded worker's reader: its sink feeds the cache
    report("context(): the same, embedded (cache hit)", await timed(lambda: cached.context("big", "bench-r"), repeat),
           base_p50)

    per_call: list[float] = []

    async def one(n: int) -> None:
        start = time.perf_counter()
        await reader.context(f"small{n}", f"bench-r{n % 50}")
        per_call.append((time.perf_counter() - start) * 1000)

    start = time.perf_counter()
    await asyncio.gather(*(one(n) for n in range(1000)))
    wall = time.perf_counter() - start
    report("context(): 1,000 threads concurrently (each)", per_call, base_p50)
    print(f"{'1,000 concurrent reads: wall time':<44} {wall * 1000:8.1f} ms  ({1000 / wall:7.0f} contexts/s)")

    # Resource scope: the context also carries the user's 19 other threads' unobserved messages.
    for n in range(20):
        load_thread(client, "bench-user", f"user-t{n}", messages=30, unobserved=10, generations=1,
                    key="resource:bench-user")
    write_context_rows(client, [("bench-user", "resource:bench-user")])
    by_user = Reader(client, OMConfig(scope="resource"))
    context = await by_user.context("user-t0", "bench-user")
    others = [s for s in context.system if s.startswith(OTHER_CONVERSATIONS_INTRO)]
    assert len(context.messages) == 10 and len(others) == 1 and others[0].count("<other-conversation ") == 19
    report("context(): resource scope, 20 threads", await timed(lambda: by_user.context("user-t0", "bench-user"),
                                                                  repeat), base_p50)
    cached_user = Reader(client, OMConfig(scope="resource"), cache=ContextCache())
    report("context(): the same, embedded (cache hit)", await timed(lambda: cached_user.context("user-t0", "bench-user"),
                                                                      repeat), base_p50)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", default=None, help="ClickHouse DSN (default: chDB in a fresh temp dir)")
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(main(args.dsn or f"chdb://{tempfile.mkdtemp(prefix='om-bench-')}", args.repeat))
