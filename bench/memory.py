"""Memory: resident set of a process holding N key states, against the same process before.

A worker keeps one :class:`KeyState` per lookup key it owns, so memory per key bounds how many
threads one worker can own. The states are made the way the processor makes them: one ~200-token
message per key through ``decide`` (the message stays in the unobserved window). Each figure is
measured in a fresh child process so the other benchmarks' heaps do not count; the baseline is that
child's RSS after its imports and before the first state.

Two ways of holding them: every state decoded in a dict (the worker's table before issue 20 item 5,
measured at up to 100,000 keys), and the worker's state store (streams/state_store.py: at most
``OM_STATE_CACHE`` decoded, the rest in a local RocksDB), each state written to it as a batch
writes it. How long a worker takes to recover that many keys from the changelog is section 6b
(bench/state_recovery.py).
"""

from __future__ import annotations

import gc
import multiprocessing
import shutil
import tempfile
import time
from pathlib import Path

from bench.corpus import messages
from processors.config import OMConfig
from processors.machine import KeyState, decide, event_key
from streams.idle_schedule import IdleSchedule
from streams.settings import Settings
from streams.state_changelog import LocalChangelog, drop_parts, read_state
from streams.state_store import SpilledStates, open_parts

DICT_KEYS = 100_000  # the dict of decoded states needs ~8 KiB a key: more would only take RAM


def rss_bytes(pid: int | str = "self") -> int:
    """Resident set of process ``pid`` (this one by default), from /proc."""
    with open(f"/proc/{pid}/status") as status:
        line = next(line for line in status if line.startswith("VmRSS:"))
    return int(line.split()[1]) * 1024


def hold_states(keys: int, store: bool) -> tuple[int, int, float, int]:
    """(RSS before, RSS while holding ``keys`` states, seconds to make them, bytes on disk)."""
    config = OMConfig.from_mastra({})
    directory = Path(tempfile.mkdtemp(prefix="om-bench-memory-"))
    local = LocalChangelog(SpilledStates(open_parts(directory), read_state, drop_parts, Settings().state_cache),
                           IdleSchedule(config), {}) if store else None
    gc.collect()
    before, started = rss_bytes(), time.perf_counter()
    states: dict[str, KeyState | None] = {}
    for message in messages(keys, 1, salt="memory"):
        key, state = event_key(message, config), decide(None, message, config).state
        if local is None:
            states[key] = state
        else:
            local.states[key] = state
            local.writes(key, None, state)
            local.states.trim()
    elapsed = time.perf_counter() - started
    gc.collect()
    held = len(states) if local is None else len(local.states)
    assert held == keys
    disk = sum(f.stat().st_size for f in directory.rglob("*") if f.is_file())
    after = rss_bytes()
    shutil.rmtree(directory, ignore_errors=True)
    return before, after, elapsed, disk


def main(keys: int) -> None:
    context = multiprocessing.get_context("spawn")
    with context.Pool(1) as pool:
        dict_keys = min(keys, DICT_KEYS)
        before, in_dict, _, _ = pool.apply(hold_states, (dict_keys, False))
    with context.Pool(1) as pool:
        base, in_store, elapsed, disk = pool.apply(hold_states, (keys, True))
    mib = 2**20
    print(f"key states, one ~200-token message each, default config (a fresh process each; "
          f"OM_STATE_CACHE={Settings().state_cache:,})")
    print(f"baseline: process after imports        {before / mib:8.1f} MiB")
    print(f"before: every state decoded in a dict  {in_dict / mib:8.1f} MiB   ratio {in_dict / before:6.2f}x   "
          f"{(in_dict - before) / dict_keys / 1024:6.1f} KiB per key   ({dict_keys:,} keys)")
    print(f"now: the worker's state store          {in_store / mib:8.1f} MiB   ratio {in_store / base:6.2f}x   "
          f"{(in_store - base) / keys / 1024:6.1f} KiB per key   ({keys:,} keys; {disk / mib:,.0f} MiB on "
          f"disk; {keys / elapsed:,.0f} keys/s made and written)")
