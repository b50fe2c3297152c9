"""Memory: resident set of a process holding N key states, against the same process before.

A worker keeps one :class:`KeyState` per lookup key it owns (Faust table, in memory), so RSS per key
bounds how many threads one worker can own. The states are made the way the processor makes them:
one ~200-token message per key through ``decide`` (the message stays in the unobserved window).
Measured in a fresh child process so the other benchmarks' heaps do not count; the baseline is
that child's RSS after its imports and before the first state.
"""

from __future__ import annotations

import gc
import multiprocessing

from bench.corpus import messages
from processors.config import OMConfig
from processors.machine import decide, event_key
from processors.machine import KeyState


def rss_bytes() -> int:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmRSS:"))
    return int(line.split()[1]) * 1024


def hold_states(keys: int) -> tuple[int, int]:
    """(RSS before, RSS while holding ``keys`` states) of this process."""
    config = OMConfig.from_mastra({})
    gc.collect()
    before = rss_bytes()
    states: dict[str, KeyState | None] = {}
    for message in messages(keys, 1, salt="memory"):
        states[event_key(message, config)] = decide(None, message, config).state
    gc.collect()
    assert len(states) == keys
    return before, rss_bytes()


def main(keys: int) -> None:
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        before, after = pool.apply(hold_states, (keys,))
    print(f"{keys:,} key states, one ~200-token message each, default config (fresh process)")
    print(f"baseline: process after imports        {before / 2**20:8.1f} MiB")
    print(f"holding the states                     {after / 2**20:8.1f} MiB   ratio {after / before:6.2f}x   "
          f"{(after - before) / keys / 1024:6.1f} KiB per key")
