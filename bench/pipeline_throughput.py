"""Processor throughput through the real Faust worker: produce N messages, time until the last is folded.

The baseline is the core alone (``decide`` with the instant fake model) on the same messages,
measured in this run: the ratio is what the shell (Kafka transactions, changelog, Faust, the sink
and the LLM agent sharing the machine) costs relative to the state machine it runs. Two shapes run:
many short threads, and a few long ones, whose states (and changelog records) grow with the thread.
CPU per message is the worker process's (all threads, ``/proc``) over the run; the offline model's
answers are made in the worker's child processes (streams/llm/deterministic/answer_pool.py), counted
on their own line: that work a real deployment's provider does. The short shape also runs with the
roles split — processor (with the embedded sink) and LLM worker as two processes; a third shape has
the many threads of the agent-turn workload (section 8), where each batch touches the most keys.

**The ceiling on this machine.** The local broker (``om services up``) shares the worker's cores, and
its CPU per message is printed too (when it is the broker in use). A worker whose shell cost nothing
would still spend the core's CPU, and the broker its own, on every message: with the machine's cores
fully used by those two alone, the rate is ``cores / (core + broker CPU per message)``; its ratio to
the core's rate is the best worker/core this machine allows, printed beside the worker's (issue 20
item 1 asks for 0.5). The bench client's producing and reading is left out of it (an app's, on
another machine in a deployment), so the ceiling is generous.
"""

from __future__ import annotations

import os
import time

from bench.core_throughput import core_rate
from bench.corpus import messages
from bench.worker import BOOTSTRAP, children_cpu_seconds, cpu_seconds, keyed, local_broker_pid, running_worker
from processors.config import OMConfig
from streams.harness.workers import produce


async def main(shapes: list[tuple[int, int]]) -> None:
    """``shapes``: (threads, messages per thread); the first also runs with the roles split."""
    for n, (threads, per_thread) in enumerate(shapes):
        await _run(threads, per_thread, ("all",))
        if n == 0:
            await _run(threads, per_thread, ("processor", "llm"))


async def _run(threads: int, per_thread: int, roles: tuple[str, ...]) -> None:
    # texts of their own per run: the core's baseline counts them with the process's token cache cold,
    # as the worker's fresh process does (the same texts again made the roles split's baseline ~1.6x)
    batch = list(messages(threads, per_thread, salt=f"pipeline-{threads}x{per_thread}-{'+'.join(roles)}"))
    pids: dict[str, int] = {}
    broker = local_broker_pid()
    async with running_worker({}, roles, pids) as (topics, arrivals):
        cpu0 = {role: cpu_seconds(pid) for role, pid in pids.items()}
        broker0 = cpu_seconds(broker) if broker else 0.0
        model0 = sum(children_cpu_seconds(pid) for pid in pids.values())
        start = time.perf_counter()
        await produce(BOOTSTRAP, topics.messages, keyed(batch))
        produced = time.perf_counter()
        last = await arrivals.wait_all(m.id for m in batch)
        cpu = {role: cpu_seconds(pid) - cpu0[role] for role, pid in pids.items()}
        broker_s = cpu_seconds(broker) - broker0 if broker else None
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
    if broker_s is not None:
        broker_ms, cores = broker_s * 1000 / len(batch), os.cpu_count() or 1
        ceiling = cores * 1000 / (1000 / baseline + broker_ms)
        print(f"  {'broker process CPU':<28}{broker_ms:8.2f} ms/msg   (the local broker, on this machine's cores)")
        print(f"ceiling: core + broker alone on {cores} cores {ceiling:7,.0f} msgs/s   worker/core {ceiling / baseline:6.3f}"
              f"   (a shell costing nothing; the target is 0.5)")
