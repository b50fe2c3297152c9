"""Processor throughput through the real Faust worker: produce N messages, time until the last is folded.

The baseline is the core alone (``decide`` with the instant fake model) on the same messages,
measured in this run: the ratio is what the shell (Kafka transactions, changelog, Faust, the sink
and the LLM agent sharing the machine) costs relative to the state machine it runs. Two shapes run:
many short threads, and a few long ones, whose states (and changelog records) grow with the thread.
"""

from __future__ import annotations

import time

from bench.core_throughput import core_rate
from bench.corpus import messages
from bench.worker import BOOTSTRAP, keyed, running_worker
from processors.config import OMConfig
from streams.harness.workers import produce


async def main(shapes: list[tuple[int, int]]) -> None:
    for threads, per_thread in shapes:
        await _run(threads, per_thread)


async def _run(threads: int, per_thread: int) -> None:
    batch = list(messages(threads, per_thread, salt="pipeline"))
    async with running_worker({}) as (topics, arrivals):
        start = time.perf_counter()
        await produce(BOOTSTRAP, topics.messages, keyed(batch))
        produced = time.perf_counter()
        last = await arrivals.wait_all(m.id for m in batch)
    rate = len(batch) / (last - start)
    baseline = core_rate(batch, OMConfig.from_mastra({}))
    print(f"{len(batch):,} messages of ~200 tokens, {threads} threads, 2 partitions, deterministic model")
    print(f"baseline: core decide, same messages   {baseline:10,.0f} msgs/s")
    print(f"worker: produce → last status event     {rate:10,.0f} msgs/s   worker/core {rate / baseline:6.3f}")
    print(f"  (producing took {produced - start:.2f} s of the {last - start:.2f} s)")
