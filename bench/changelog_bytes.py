"""Changelog bytes per message: what the processor writes for each message folded, short and long threads.

The baseline is the message's own record (what the messages topic already holds): the ratio says
how many bytes of state the changelog adds per byte of input. The figures are for the records of
:mod:`streams.state_changelog` (the slim state, and an item per window message, observed id, cycle
id, chunk and block of observation text, each written when it changed) beside the whole key state
the changelog held before (issue 20 item 2), with the bytes per message of each record kind.
Computed from the core's states, one write per message (a live thread's batches hold one message of
a key each); no broker.
"""

from __future__ import annotations

from collections import Counter

import orjson

from bench.corpus import messages
from processors.config import OMConfig
from processors.simulate import Simulation
from streams.harness.echo_model import respond
from streams.state_changelog import writes

KINDS = {"m": "bodies", "o": "observed ids", "a": "cycle ids", "f": "jobs", "t": "threads", "r": "record head",
         "x": "log texts", "c": "chunks"}


def _bytes(threads: int, per_thread: int) -> tuple[float, float, float, float, dict[str, float]]:
    """(message bytes, changelog bytes now, whole states, now in the last tenth, now by record kind)
    per message."""
    simulation = Simulation(OMConfig.from_mastra({}), respond)
    last: dict[str, object] = {}
    sizes: list[int] = []
    kinds: Counter[str] = Counter()
    whole = given = 0
    for message in messages(threads, per_thread, salt="changelog"):
        simulation.feed(message)
        key = next(k for k in simulation.states if message.thread_id in k)  # one thread per key
        state = simulation.states[key]
        written = writes(key, last.get(key), state)
        for part, value in written:
            name = orjson.loads(part)
            kinds[KINDS[name[1]] if name.startswith("\x00") else "slim state"] += len(part) + len(value or b"")
        sizes.append(sum(len(k) + len(v or b"") for k, v in written))
        whole += len(key) + len(state.to_bytes())
        given += len(message.to_bytes())
        last[key] = state
    n = len(sizes)
    tail = sizes[-max(1, n // 10):]
    return given / n, sum(sizes) / n, whole / n, sum(tail) / len(tail), {k: v / n for k, v in kinds.most_common()}


def main(shapes: list[tuple[int, int]]) -> None:
    for threads, per_thread in shapes:
        given, now, whole, tail, kinds = _bytes(threads, per_thread)
        print(f"{threads * per_thread:,} messages of ~200 tokens, {threads} threads of {per_thread:,}, default config")
        print(f"baseline: the message's own record      {given:10,.0f} B")
        print(f"changelog now (per-item records)        {now:10,.0f} B   ratio {now / given:6.2f}   "
              f"last tenth {tail / given:6.2f}")
        print(f"changelog before (whole key state)      {whole:10,.0f} B   ratio {whole / given:6.2f}")
        print("  now by record kind: " + ", ".join(f"{name} {size:,.0f} B" for name, size in kinds.items()))
