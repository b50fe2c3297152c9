"""Processor throughput through the real Faust worker: produce N messages, time until the last is folded.

The baseline is the core alone (``decide`` with the instant fake model) on the same messages,
measured in this run: the ratio is what the shell (Kafka transactions, changelog, Faust, the sink
and the LLM agent sharing the machine) costs relative to the state machine it runs. Two shapes run:
many short threads, and a few long ones, whose states (and changelog records) grow with the thread.
CPU per message is the worker process's (all threads, ``/proc``) over the run; the offline model's
answers are made in the worker's child processes (streams/llm/deterministic/answer_pool.py), counted
on their own line: that work a real deployment's provider does. The short shape also runs with the
roles split — processor (with the embedded sink) and LLM worker as two processes.
"""

from __future__ import annotations

import time

from bench.core_throughput import core_rate
from bench.corpus import messages
from bench.worker import BOOTSTRAP, children_cpu_seconds, cpu_seconds, keyed, running_worker
from processors.config import OMConfig
from streams.harness.workers import produce


async def main(shapes: list[tuple[int, int]]) -> None:
    for n, (threads, per_thread) in enumerate(shapes):
        await _run(threads, per_thread, ("all",))
        if n == 0:
            await _run(threads, per_thread, ("processor", "llm"))


async def _run(threads: int, per_thread: int, roles: tuple[str, ...]) -> None:
    batch = list(messages(threads, per_thread, salt="pipeline"))
    pids: dict[str, int] = {}
    async with running_worker({}, roles, pids) as (topics, arrivals):
        cpu0 = {role: cpu_seconds(pid) for role, pid in pids.items()}
        model0 = sum(children_cpu_seconds(pid) for pid in pids.values())
        start = time.perf_counter()
        await produce(BOOTSTRAP, topics.messages, keyed(batch))
        produced = time.perf_counter()
        last = await arrivals.wait_all(m.id for m in batch)
        cpu = {role: cpu_seconds(pid) - cpu0[role] for role, pid in pids.items()}
        model = sum(children_cpu_seconds(pid) for pid in pids.values()) - model0
    rate = len(batch) / (last - start)
    baseline = core_rate(batch, OMConfig.from_mastra({}))
    shape = "one worker" if roles == ("all",) else "roles split: " + " + ".join(roles)
    print(f"{len(batch):,} messages of ~200 tokens, {threads} threads, 2 partitions, deterministic model, {shape}")
    print(f"baseline: core decide, same messages   {baseline:10,.0f} msgs/s   core CPU {1000 / baseline:5.2f} ms/msg")
    print(f"worker: produce → last status event     {rate:10,.0f} msgs/s   worker/core {rate / baseline:6.3f}")
    for role, seconds in cpu.items():
        print(f"  {role + ' process CPU':<28}{seconds * 1000 / len(batch):8.2f} ms/msg   "
              f"x {seconds * baseline / len(batch):5.1f} the core's")
    print(f"  {'offline model processes':<28}{model * 1000 / len(batch):8.2f} ms/msg   (a provider's work in a deployment)")
    print(f"  {'cycles failed':<28}{arrivals.failed_cycles:8d}         (a model error, or a job over the record limit)")
    print(f"  (producing took {produced - start:.2f} s of the {last - start:.2f} s)")
