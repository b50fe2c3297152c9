"""Running the real worker (``om run``) in a subprocess and driving it like an app would.

The expected behaviour comes from the core alone: :func:`expected_run` folds the same messages
through ``decide`` and answers every job with the same deterministic model the worker uses, and
records after which message each burst of work happens ("gates"). Production is gated the same
way — the test waits at each gate until the worker has emitted everything the core emitted — so the
pipeline's event sequence must equal the core's exactly, whatever the timing of the LLM workers.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from processors.config import OMConfig
from processors.machine import decide, event_key
from processors.tokens import get_counter
from schemas.deltas import RecordSnapshot
from schemas.messages import ChatMessage
from streams.harness.workers import EventLog, Signature, WorkerProcess, produce, signature, wait_until
from streams.llm.client import LiteLLMClient
from streams.llm.jobs import run_job
from streams.om_config import load_config
from streams.topics import Topics

__all__ = [  # the drivers live in streams.harness; the tests take them from here with the rest
    "EventLog", "ExpectedRun", "WorkerProcess", "conversation", "expected_run", "gated_conversation",
    "produce", "seeded_conversation", "signature", "wait_until", "worker_config",
]


@dataclass
class ExpectedRun:
    """Per key: the core's non-status events, after which message index each gate closes, and the
    last record snapshot (the final observation log, chunks and cursor)."""

    events: dict[str, list[Signature]]
    gates: dict[str, list[tuple[int, int]]]  # (message index within key, events expected so far)
    snapshots: dict[str, RecordSnapshot]
    lifecycle: dict[str, list[Any]]  # the non-status events themselves, for the invariant checks


async def expected_run(messages: list[ChatMessage], config: OMConfig) -> ExpectedRun:
    llm = LiteLLMClient()
    counter = get_counter(config.token_counter)
    states: dict[str, Any] = {}
    events: dict[str, list[Signature]] = defaultdict(list)
    lifecycle: dict[str, list[Any]] = defaultdict(list)
    gates: dict[str, list[tuple[int, int]]] = defaultdict(list)
    index: dict[str, int] = defaultdict(int)
    snapshots: dict[str, RecordSnapshot] = {}

    def apply(event: Any) -> list:
        key = event_key(event, config)
        decision = decide(states.get(key), event, config)
        states[key] = decision.state
        lifecycle[key].extend(e for e in decision.events if e.type != "status")
        events[key].extend(signature(e) for e in lifecycle[key][len(events[key]):])
        snapshots.update((key, d) for d in decision.deltas if isinstance(d, RecordSnapshot))
        return list(decision.jobs)

    for message in messages:
        key = event_key(message, config)
        jobs = apply(message)
        had_work = bool(jobs)
        while jobs:
            job = jobs.pop(0)
            jobs.extend(apply(await run_job(job, config, llm, counter)))
        if had_work:
            gates[key].append((index[key], len(events[key])))
        index[key] += 1
    return ExpectedRun(dict(events), dict(gates), snapshots, dict(lifecycle))


async def gated_conversation(worker_bootstrap: str, topic: str, log: EventLog, expected: ExpectedRun,
                             messages: list[ChatMessage], config: OMConfig,
                             after_produce: Any = None, after_round: Any = None) -> None:
    """Produce each key's messages up to its next gate, wait for the core's events, repeat.

    ``after_produce(round_number)`` runs after each round is produced and before waiting for its
    events — the moment to kill or add a worker while work is in flight; ``after_round(round_number)``
    once the round's events came — a quiet moment.
    """
    per_key: dict[str, list[ChatMessage]] = defaultdict(list)
    for message in messages:
        per_key[event_key(message, config)].append(message)
    position = {key: 0 for key in per_key}
    gates = {key: list(expected.gates.get(key, [])) for key in per_key}
    round_number = 0
    while any(position[key] < len(per_key[key]) for key in per_key):
        batch: list[tuple[str, bytes]] = []
        waits: list[tuple[str, int]] = []
        for key, msgs in per_key.items():
            if position[key] >= len(msgs):
                continue
            if gates[key]:
                gate_index, count = gates[key].pop(0)
                end = gate_index + 1
                waits.append((key, count))
            else:
                end = len(msgs)
            batch.extend((key, m.to_bytes()) for m in msgs[position[key]:end])
            position[key] = end
        await produce(worker_bootstrap, topic, batch)
        round_number += 1
        if after_produce is not None:
            await after_produce(round_number)
        for key, count in waits:
            await log.wait_for(key, count)
            got, want = log.signatures(key)[:count], expected.events[key][:count]
            assert got == want, _first_difference(key, got, want)
        if after_round is not None:
            await after_round(round_number)
    for key in per_key:
        await log.wait_for(key, len(expected.events.get(key, [])))


async def run_as_the_core(kafka_bootstrap: str, worker: WorkerProcess, expected: ExpectedRun,
                          messages: list[ChatMessage], config: OMConfig) -> None:
    """Produce ``messages`` to ``worker`` gated by the core's run; every key's lifecycle events must
    equal the core's."""
    topics = Topics.for_prefix(worker.prefix)
    async with EventLog(kafka_bootstrap, topics.events) as log:
        await gated_conversation(kafka_bootstrap, topics.messages, log, expected, messages, config)
        for key, events in expected.events.items():
            assert log.signatures(key) == events, key


def _first_difference(key: str, got: list[Signature], want: list[Signature]) -> str:
    index = next(i for i, (a, b) in enumerate(zip(got, want)) if a != b)
    return f"{key}: event {index} differs:\n  got  {got[index - 2:index + 2]}\n  want {want[index - 2:index + 2]}"


def conversation(threads: int, per_thread: int, *, start: int = 1_733_000_000_000) -> list[ChatMessage]:
    """Interleaved threads of alternating user/assistant turns, a minute apart, varied lengths."""
    words = ("plan trip lisbon budget flight hotel museum dinner train weekend friend "
             "project deadline review tests deploy bug fix cache kafka memory notes").split()
    messages = []
    for i in range(per_thread):
        for t in range(threads):
            n = 20 + (i * 7 + t * 13) % 60
            text = " ".join(words[(i + j + t) % len(words)] for j in range(n))
            messages.append(ChatMessage(
                id=f"t{t}-m{i}", thread_id=f"t{t}", resource_id=f"r{t}",
                role="user" if i % 2 == 0 else "assistant", created_at=start + i * 60_000 + t,
                parts=[{"type": "text", "text": f"{'User' if i % 2 == 0 else 'Assistant'} turn {i}: {text}"}],
            ))
    return messages


def seeded_conversation(seeds: range, *, start: int = 1_733_000_000_000) -> list[ChatMessage]:
    """One thread per seed, each drawn from its own ``random.Random(seed)`` (the fuzz corpus's way):
    6–24 messages, mostly alternating roles, lengths from a line to a long paste, finished and
    failed tool calls, a few seconds to ten minutes apart; the threads interleave by time."""
    words = ("plan trip lisbon budget flight hotel museum dinner train weekend friend project deadline "
             "review tests deploy bug fix cache kafka memory notes invoice doctor tuesday garden").split()
    messages = []
    for seed in seeds:
        rng, at, role = random.Random(seed), start + seed, "user"
        for i in range(rng.randint(6, 24)):
            size = rng.choice((5, 12, 30, 60, 120)) if rng.random() < 0.85 else rng.randint(300, 900)
            parts: list[dict[str, Any]] = [{"type": "text", "text": " ".join(rng.choice(words) for _ in range(size))}]
            if role == "assistant" and rng.random() < 0.3:
                failed = rng.random() < 0.2
                parts.append({"type": "tool-invocation", "tool_call_id": f"s{seed}-c{i}", "tool_name": "search",
                              "state": "output-error" if failed else "result", "args": {"q": rng.choice(words)},
                              **({"error_text": "timeout"} if failed else {"result": rng.choice(words)})})
            messages.append(ChatMessage(id=f"s{seed}-m{i}", thread_id=f"s{seed}", resource_id=f"r{seed}",
                                        role=role, created_at=at, parts=parts))
            at += rng.choice((3_000, 20_000, 60_000, 240_000, 600_000))
            role = role if rng.random() < 0.15 else ("assistant" if role == "user" else "user")
    return sorted(messages, key=lambda m: m.created_at)


def worker_config(worker: WorkerProcess) -> OMConfig:
    return load_config(worker.settings())
