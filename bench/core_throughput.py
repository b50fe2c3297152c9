"""Processor throughput on one core: messages/s through ``decide`` vs the tokenizer bound.

The fold must count every message's tokens at least once, so ``count_message`` over the same
number of equally long texts is the ceiling; the ratio says how much of it the rest of the state
machine (windows, planning, jobs, events, snapshots) costs. Observer/Reflector jobs are answered
by the instant fake model, so applying their results is part of the figure; the model is not (the
time spent inside it is measured and taken out). Each pass gets its own salt so neither reads the
other's cached token estimates. The two passes alternate for ``ROUNDS`` rounds and each keeps its
best: on a machine shared with other work, one slow pass must not pick the ratio.
"""

from __future__ import annotations

import time

from bench.corpus import messages
from processors.config import OMConfig
from processors.simulate import Job, Result, Simulation
from processors.tokens import get_counter
from schemas.messages import ChatMessage
from streams.harness.echo_model import respond


def tokenizer_rate(batch: list[ChatMessage]) -> float:
    counter = get_counter("tokenx")
    start = time.perf_counter()
    for message in batch:
        counter.count_message(message)
    return len(batch) / (time.perf_counter() - start)


def core_rate(batch: list[ChatMessage], config: OMConfig) -> float:
    """Messages/s folded by the core, jobs answered as soon as they are issued."""
    in_model = 0.0

    def model(job: Job) -> Result:
        nonlocal in_model
        start = time.perf_counter()
        result = respond(job)
        in_model += time.perf_counter() - start
        return result

    simulation = Simulation(config, model)
    start = time.perf_counter()
    for message in batch:
        simulation.feed(message)
    return len(batch) / (time.perf_counter() - start - in_model)


ROUNDS = 3


def main(threads: int, per_thread: int) -> None:
    n = threads * per_thread
    bound = core = 0.0
    for r in range(ROUNDS):
        bound = max(bound, tokenizer_rate(list(messages(threads, per_thread, salt=f"tokenizer{r}"))))
        core = max(core, core_rate(list(messages(threads, per_thread, salt=f"core{r}")), OMConfig.from_mastra({})))
    print(f"{n:,} messages of ~200 tokens, {threads} threads, default config, instant fake model, "
          f"best of {ROUNDS} alternating rounds")
    print(f"baseline: tokenizer count_message      {bound:10,.0f} msgs/s")
    print(f"core: decide (+ results applied)       {core:10,.0f} msgs/s   core/tokenizer {core / bound:6.3f}")
