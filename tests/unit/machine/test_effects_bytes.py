"""Everything the core emits serialises to the same bytes as before a change of how it is built
(issue 20 item 3: the core is restructured for speed, its decisions and wire bytes may not move).

One digest per corpus over every decision's jobs, lifecycle events, deltas, dropped ids, rejection
and the state it returns, in order: the seeded fuzz (every fuzz config, duplicates, stale results,
idle ticks, turns, failures), and conversations through the simulation in thread and resource scope,
with retrieval, temporal markers, a slow model and small thresholds so that every cycle kind —
buffering, activation, synchronous observation, background and synchronous reflection, roll-over —
occurs many times. A digest moves only when the bytes do: a deliberate change of behaviour or of a
wire model re-pins it (run this file with ``OM_PRINT_DIGESTS=1`` to print the new values).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator

import pytest

from bench.corpus import messages
from processors import simulate
from processors.config import OMConfig
from processors.machine import decide
from processors.simulate import simulate as run_simulation
from streams.harness.echo_model import respond
from tests.unit.machine import fuzz_harness

SMALL = {"observation": {"message_tokens": 3000}, "reflection": {"observation_tokens": 1500}}
CONVERSATIONS = {
    # name: (options, model latency, gap between a thread's turns), all in ms of event time
    "thread": (SMALL, 0, 90_000),
    "thread, slow model": (SMALL, 600_000, 90_000),
    "resource": ({**SMALL, "scope": "resource"}, 0, 90_000),
    "retrieval, temporal markers": ({**SMALL, "retrieval": True, "temporal_markers": True}, 0, 700_000),
    "no buffering, sync reflection": ({"observation": {"message_tokens": 3000, "buffer_tokens": False},
                                      "reflection": {"observation_tokens": 1500, "buffer_activation": None}},
                                      0, 90_000),
    "defaults": ({}, 0, 90_000),
}
PINNED = {
    "fuzz": "a322d55259675d05855d16a3d67ad4231c3e0f8fb2400f9eba068a249abef302",
    "thread": "572326e8bee0f39950251c228378522cbc88221f66d18ad5e921cbc55046a9fe",
    "thread, slow model": "743972374971163d8c8e7dc9183f3fb31b56249fc44278ab57d8bc15cbadcb44",
    "resource": "a854fe351487b76cbe460449e326b841c152bcaf3543373d79fcaf5fb3a2630f",
    "retrieval, temporal markers": "85dbcb63230c18f2b9d1ba2cabd5fae119a6326602483ec7b10de6f5a64e5e92",
    "no buffering, sync reflection": "ec303399747fc2e4218b00973c9b492eda058fba597bc788aba88ce0e0282766",
    "defaults": "39201a8e0c62bddcb1ca806aae212f1ef2ac3e120588885ae1f749c6bd64e2ed",
}


class Recorder:
    """Wraps ``decide``: hashes each decision's effects as the shell would send them."""

    def __init__(self) -> None:
        self.digest = hashlib.sha256()

    def __call__(self, state, event, config):
        decision = decide(state, event, config)
        h = self.digest
        for part in (*decision.jobs, *decision.events, *decision.deltas):
            h.update(part.to_bytes())
        h.update(repr((decision.dropped, decision.rejection)).encode())
        h.update(b"-" if decision.state is None else decision.state.to_bytes())
        return decision


def fuzz_digest(seeds: range, monkeypatch: pytest.MonkeyPatch) -> str:
    recorder = Recorder()
    monkeypatch.setattr(fuzz_harness, "decide", recorder)
    for seed in seeds:
        fuzz_harness.run_seed(seed)
    return recorder.digest.hexdigest()


def conversation_digest(options: dict, latency_ms: int, gap_ms: int, monkeypatch: pytest.MonkeyPatch) -> str:
    recorder = Recorder()
    monkeypatch.setattr(simulate, "decide", recorder)
    batch = list(messages(3, 400 if options else 900, salt="bytes", gap_ms=gap_ms))
    for _ in run_simulation(batch, OMConfig.from_mastra(options), respond, latency_ms):
        pass
    return recorder.digest.hexdigest()


def digests(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, str]]:
    yield "fuzz", fuzz_digest(range(300), monkeypatch)
    for name, (options, latency, gap) in CONVERSATIONS.items():
        yield name, conversation_digest(options, latency, gap, monkeypatch)


def test_the_core_emits_the_pinned_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    found = dict(digests(monkeypatch))
    if os.environ.get("OM_PRINT_DIGESTS"):
        print("\n".join(f'    "{name}": "{value}",' for name, value in found.items()))
    assert found == PINNED
