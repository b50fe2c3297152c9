"""Running the real worker (``om run``) in a subprocess and driving it like an app would.

The expected behaviour comes from the core alone: :func:`expected_run` folds the same messages
through ``decide`` and answers every job with the same deterministic model the worker uses, and
records after which message each burst of work happens ("gates"). Production is gated the same
way — the test waits at each gate until the worker has emitted everything the core emitted — so the
pipeline's event sequence must equal the core's exactly, whatever the timing of the LLM workers.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from processors.config import OMConfig
from processors.decide import decide, event_key
from processors.tokens import get_counter
from schemas.deltas import RecordSnapshot
from schemas.lifecycle import decode_event
from schemas.messages import ChatMessage
from streams.llm.client import LiteLLMClient
from streams.llm.jobs import run_job
from streams.om_config import load_config
from streams.services.worker_process import WorkerHandle, free_port
from streams.settings import Settings

Signature = tuple[str, str, str, tuple[str, ...]]


def signature(event: Any) -> Signature:
    """What must match between core and pipeline: kind, cycle, operation and covered messages."""
    return (event.type, getattr(event, "cycle_id", ""), getattr(event, "operation_type", ""),
            tuple(getattr(event, "message_ids", ()) or ()))


@dataclass
class WorkerProcess:
    bootstrap: str
    prefix: str
    config: dict[str, Any]
    workdir: Path
    model: str = "om-deterministic/observer"
    partitions: int = 2
    extra_env: dict[str, str] = field(default_factory=dict)
    handles: list[WorkerHandle] = field(default_factory=list)

    def env(self) -> dict[str, str]:
        config_file = self.workdir / "om-config.json"
        config_file.write_bytes(orjson.dumps(self.config))
        return {
            "OM_KAFKA_BOOTSTRAP": self.bootstrap,
            "OM_TOPIC_PREFIX": self.prefix,
            "OM_CONFIG_FILE": str(config_file),
            "OM_MODEL": self.model,
            "OM_PARTITIONS": str(self.partitions),
            "OM_DATA_DIR": str(self.workdir / "data"),
            "OM_LOG_LEVEL": os.environ.get("OM_TEST_WORKER_LOG_LEVEL", "WARNING"),
            "OM_LLM_CONCURRENCY": "1",  # results in issue order, as the core's own run answers them
            "OM_SESSION_TIMEOUT_MS": "6000",  # a killed worker's partitions move on quickly
            "OM_COMMIT_STALL_S": "15",  # a wedged worker restarts itself well within a round's deadline
            **self.extra_env,
        }

    def settings(self) -> Settings:
        env = self.env()
        return Settings(kafka_bootstrap=self.bootstrap, topic_prefix=self.prefix, model=self.model,
                        config_file=Path(env["OM_CONFIG_FILE"]), partitions=self.partitions,
                        data_dir=self.workdir / "data")

    def start(self, role: str = "all") -> WorkerHandle:
        """Start one more worker (each with its own ports and chDB directory)."""
        n = len(self.handles)
        web, reader = free_port(), free_port()
        env = {**self.env(), "OM_WEB_PORT": str(web), "OM_READER_PORT": str(reader),
               "OM_CLICKHOUSE_DSN": f"chdb://{self.workdir / f'clickhouse-{n}'}"}
        handle = WorkerHandle(env, self.workdir / f"worker-{n}.log", role)
        handle.start(f"http://127.0.0.1:{web}/")
        self.handles.append(handle)
        return handle

    def kill(self) -> None:
        for handle in self.handles:
            handle.kill()

    def restart_killed(self, *, without_env: tuple[str, ...] = ()) -> None:
        """Start every worker that died again on its own ports and chDB directory, as a supervisor
        would; the embedded sink then resumes from its committed offsets into the same tables.
        ``without_env``: settings to drop first (e.g. the crash point that killed it)."""
        for handle in self.handles:
            if handle.proc is not None and handle.proc.poll() is not None:
                for name in without_env:
                    handle.env.pop(name, None)
                handle.start(f"http://127.0.0.1:{handle.env['OM_WEB_PORT']}/")

    def stop(self) -> None:
        """Teardown: a worker gets 10 s to leave its group (a Faust shutdown waiting on a rebalance
        took 30 s here), then kill -9, which exactly-once makes just as safe."""
        for handle in self.handles:
            handle.stop(timeout=10.0)


@dataclass
class ExpectedRun:
    """Per key: the core's non-status events, after which message index each gate closes, and the
    last record snapshot (the final observation log, chunks and cursor)."""

    events: dict[str, list[Signature]]
    gates: dict[str, list[tuple[int, int]]]  # (message index within key, events expected so far)
    snapshots: dict[str, RecordSnapshot]


async def expected_run(messages: list[ChatMessage], config: OMConfig) -> ExpectedRun:
    llm = LiteLLMClient()
    counter = get_counter(config.token_counter)
    states: dict[str, Any] = {}
    events: dict[str, list[Signature]] = defaultdict(list)
    gates: dict[str, list[tuple[int, int]]] = defaultdict(list)
    index: dict[str, int] = defaultdict(int)
    snapshots: dict[str, RecordSnapshot] = {}

    def apply(event: Any) -> list:
        key = event_key(event, config)
        decision = decide(states.get(key), event, config)
        states[key] = decision.state
        events[key].extend(signature(e) for e in decision.events if e.type != "status")
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
    return ExpectedRun(dict(events), dict(gates), snapshots)


class EventLog:
    """Reads a topic (read_committed) in the background, decoded and grouped by key: the events
    topic by default, the records topic with ``decoder=decode_delta``."""

    def __init__(self, bootstrap: str, topic: str, decoder: Callable[[bytes], Any] = decode_event) -> None:
        self.bootstrap, self.topic, self.decoder = bootstrap, topic, decoder
        self.by_key: dict[str, list[Any]] = defaultdict(list)
        self._task: asyncio.Task | None = None

    async def __aenter__(self) -> EventLog:
        self._consumer = AIOKafkaConsumer(self.topic, bootstrap_servers=self.bootstrap, group_id=None,
                                          auto_offset_reset="earliest", isolation_level="read_committed",
                                          fetch_max_wait_ms=20)
        await self._consumer.start()
        self._task = asyncio.create_task(self._pump())
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        await self._consumer.stop()

    async def _pump(self) -> None:
        while True:
            for records in (await self._consumer.getmany(timeout_ms=50)).values():
                for record in records:
                    self.by_key[record.key.decode()].append(self.decoder(record.value))

    def signatures(self, key: str) -> list[Signature]:
        return [signature(e) for e in self.by_key[key] if e.type != "status"]

    def count(self, key: str, event_type: str) -> int:
        return sum(1 for e in self.by_key[key] if e.type == event_type)

    async def wait_for(self, key: str, count: int, deadline_s: float = 90.0) -> None:
        deadline = time.monotonic() + deadline_s
        while len(self.signatures(key)) < count:
            if time.monotonic() > deadline:
                got = self.signatures(key)
                raise AssertionError(f"{key}: expected {count} lifecycle events within {deadline_s}s, "
                                     f"got {len(got)}; last: {got[-3:]}")
            await asyncio.sleep(0.02)


async def wait_until(condition: Callable[[], bool], deadline_s: float, what: str) -> None:
    """Poll ``condition`` until it holds; fail naming ``what`` once ``deadline_s`` has passed."""
    deadline = time.monotonic() + deadline_s
    while not condition():
        assert time.monotonic() < deadline, f"{what} (not within {deadline_s:.0f} s)"
        await asyncio.sleep(0.02)


async def produce(bootstrap: str, topic: str, items: list[tuple[str, bytes]]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True, linger_ms=5)
    await producer.start()
    try:
        for key, value in items:
            await producer.send(topic, value, key=key.encode())
        await producer.flush()
    finally:
        await producer.stop()


async def gated_conversation(worker_bootstrap: str, topic: str, log: EventLog, expected: ExpectedRun,
                             messages: list[ChatMessage], config: OMConfig,
                             after_produce: Any = None) -> None:
    """Produce each key's messages up to its next gate, wait for the core's events, repeat.

    ``after_produce(round_number)`` runs after each round is produced and before waiting for its
    events — the moment to kill or add a worker while work is in flight.
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
    for key in per_key:
        await log.wait_for(key, len(expected.events.get(key, [])))


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


def worker_config(worker: WorkerProcess) -> OMConfig:
    return load_config(worker.settings())
