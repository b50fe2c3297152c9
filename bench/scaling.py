"""Scaling with workers: the same workload through 1, 2 and 3 workers sharing 12 partitions.

Each run starts N workers together on fresh topics (the scale-out shape: ClickHouse is a server the
workers never open, so the figures are the processor's and the LLM agent's), waits until every
worker has folded a warm-up message, then produces the workload and times it until the last
message's ``status`` event is visible. CPU per message is the workers' own CPU time (user + system,
from /proc) over that window, divided by the messages. Both are also given as a ratio to the
1-worker run. Point ``OM_KAFKA_BOOTSTRAP`` at the cluster (``om services up --brokers 3``) to measure
the replicated shape; on 2 cores the throughput curve flattens, and the CPU per message shows what
each extra worker costs.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import time
import uuid
from pathlib import Path

from bench.corpus import messages
from bench.worker import BOOTSTRAP, Arrivals, keyed
from schemas.messages import ChatMessage
from streams.harness.workers import WorkerProcess, produce
from streams.topics import Topics

PARTITIONS = 12
SERVER_DSN = "http://127.0.0.1:8123/om"  # never opened: the workers run no sink or reader
TICKS = os.sysconf("SC_CLK_TCK")


async def main(worker_counts: list[int], threads: int, per_thread: int) -> None:
    print(f"{threads * per_thread:,} messages of ~200 tokens, {threads} threads, {PARTITIONS} partitions, "
          f"deterministic model, broker(s) {BOOTSTRAP}")
    print(f"{'workers':>7}  {'msgs/s':>8}  {'vs 1':>5}  {'CPU ms/msg':>10}  {'vs 1':>5}")
    base: tuple[float, float] | None = None
    for count in worker_counts:
        rate, cpu_ms = await _run(count, threads, per_thread)
        base = base or (rate, cpu_ms)
        print(f"{count:>7}  {rate:8,.0f}  {rate / base[0]:5.2f}  {cpu_ms:10.2f}  {cpu_ms / base[1]:5.2f}")


async def _run(count: int, threads: int, per_thread: int) -> tuple[float, float]:
    workdir = Path(tempfile.mkdtemp(prefix="om-bench-scaling-"))
    group = WorkerProcess(BOOTSTRAP, f"scale-{uuid.uuid4().hex[:8]}", {}, workdir, partitions=PARTITIONS,
                          clickhouse_dsn=SERVER_DSN, extra_env={"OM_LLM_CONCURRENCY": "4"})
    batch = list(messages(threads, per_thread, salt=f"scale{count}"))
    try:
        await asyncio.to_thread(group.start_many, count)
        topics = Topics.for_prefix(group.prefix)
        async with Arrivals(BOOTSTRAP, topics.events) as arrivals:
            warm = [ChatMessage(id=f"warm-{t}", thread_id=f"warm-{t}", resource_id="warm", role="user",
                                created_at=1, parts=[{"type": "text", "text": "hello"}]) for t in range(4 * PARTITIONS)]
            await produce(BOOTSTRAP, topics.messages, keyed(warm))  # every partition, so every worker, is warm
            await arrivals.wait_all([m.id for m in warm], deadline_s=180)
            cpu_before = _cpu_seconds(group)
            start = time.perf_counter()
            await produce(BOOTSTRAP, topics.messages, keyed(batch))
            last = await arrivals.wait_all([m.id for m in batch])
            cpu = _cpu_seconds(group) - cpu_before
    finally:
        group.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return len(batch) / (last - start), cpu * 1000 / len(batch)


def _cpu_seconds(group: WorkerProcess) -> float:
    total = 0
    for handle in group.handles:
        assert handle.proc is not None and handle.proc.poll() is None, "a worker died during the run"
        fields = Path(f"/proc/{handle.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return total / TICKS
