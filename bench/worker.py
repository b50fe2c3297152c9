"""A real worker (``om run``, all roles, embedded chDB) for the pipeline benchmarks, and a clock on its output.

The worker is the one the integration tests drive (:class:`tests.integration.pipeline.WorkerProcess`),
on fresh topics, so the figures are about the shipped runtime. :class:`Arrivals` notes when each
message's ``status`` event (``applied_through`` = that message) becomes visible to a read_committed
consumer — the moment an app could see the processor has folded it.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import orjson

from processors.machine import lookup_key
from schemas.messages import ChatMessage
from streams.services.errors import ServiceError
from streams.services.kafka import LocalKafkaBroker
from streams.settings import get_settings
from streams.topics import Topics
from streams.harness.workers import EventLog, WorkerProcess, produce

BOOTSTRAP = get_settings().kafka_bootstrap  # OM_KAFKA_BOOTSTRAP, the local broker by default


def folded_message(value: bytes) -> str | None:
    """The message a ``status`` event says the record has folded through, else None. Read off the
    JSON without validating the event: the benchmark's own clock shares the machine's two cores with
    the worker it times (``tests/unit/test_bench_worker.py`` checks it against the decoded event)."""
    if b'"status"' not in value:
        return None
    event = orjson.loads(value)
    through = event.get("applied_through") if event.get("type") == "status" else None
    return through["message_id"] if through else None


_FAILED_CYCLE = re.compile(rb'"type":"[a-z]+-failed"')


def failed_cycle(value: bytes) -> bool:
    """Whether the record is an ``observation-failed``, ``buffering-failed`` or ``reflection-failed``
    event (read off the JSON, as :func:`folded_message` does)."""
    return _FAILED_CYCLE.search(value) is not None


def keyed(batch: Iterable[ChatMessage]) -> list[tuple[str, bytes]]:
    """Messages as Kafka records, keyed by their (thread-scope) lookup key."""
    return [(lookup_key("thread", m.thread_id, m.resource_id), m.to_bytes()) for m in batch]


class Arrivals(EventLog):
    """A topic reduced to: record id → when it first became visible (``time.perf_counter``).

    ``ident`` names a record (None = not one we time); by default a ``status`` event is named by
    its ``applied_through`` message, so a message "arrives" once the processor has folded it.
    """

    def __init__(self, bootstrap: str, topic: str, ident: Callable[[bytes], str | None] | None = None) -> None:
        super().__init__(bootstrap, topic)
        self.ident = ident or folded_message
        self.at: dict[str, float] = {}
        self.failed_cycles = 0  # Observer and Reflector cycles that ended failed (a model error, a job too big)

    async def _pump(self) -> None:
        while True:
            for records in (await self._consumer.getmany(timeout_ms=50)).values():
                now = time.perf_counter()
                for record in records:
                    if (name := self.ident(record.value)) is not None:
                        self.at.setdefault(name, now)
                    elif failed_cycle(record.value):
                        self.failed_cycles += 1

    async def wait_all(self, ids: Iterable[str], deadline_s: float = 300.0) -> float:
        """Wait until every id has arrived; returns the latest arrival time."""
        wanted = list(ids)
        missing = set(wanted)
        deadline = time.monotonic() + deadline_s
        while missing := {i for i in missing if i not in self.at}:  # only the ones still missing, each look
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(missing)} of {len(wanted)} status events missing after {deadline_s:.0f} s")
            await asyncio.sleep(0.02)
        return max(self.at[i] for i in wanted)


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far, from ``/proc/<pid>/stat`` (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def local_broker_pid() -> int | None:
    """The pid of the local broker (``om services up``) when the benchmark uses it, else None."""
    try:
        broker = LocalKafkaBroker.from_settings(get_settings())
    except ServiceError:  # a broker on another machine: its CPU is not this machine's
        return None
    status = broker.status()
    return status.pid if status.bootstrap == BOOTSTRAP else None


def children_cpu_seconds(pid: int) -> float:
    """User + system CPU of a process's children so far: the live ones' (the worker's offline model
    processes, streams/llm/deterministic/answer_pool.py) and the ended ones it waited for."""
    own = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    total = (int(own[13]) + int(own[14])) / os.sysconf("SC_CLK_TCK")
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended while listed
            continue
        if int(fields[1]) == pid:
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


async def settled(pids: list[int], idle_share: float = 0.1, window_s: float = 0.5, deadline_s: float = 90.0) -> None:
    """Wait until every process is idle (under ``idle_share`` of a core over ``window_s``): what a
    worker does once as it starts (importing the model library, first queries) is not a figure."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        before = [cpu_seconds(pid) for pid in pids]
        await asyncio.sleep(window_s)  # a measuring window, not a wait for an event
        if all(cpu_seconds(pid) - cpu < idle_share * window_s for pid, cpu in zip(pids, before)):
            return
    raise TimeoutError(f"the worker was still busy {deadline_s:.0f} s after it started")


@asynccontextmanager
async def running_worker(config: dict[str, Any], roles: tuple[str, ...] = ("all",),
                         pids: dict[str, int] | None = None) -> AsyncIterator[tuple[Topics, Arrivals]]:
    """Start a worker (deterministic model) on fresh topics — one process per role in ``roles`` —;
    once it has folded a first message and gone quiet, yield its topics and the clock on its events topic.
    ``pids`` is filled with each role's process id."""
    workdir = Path(tempfile.mkdtemp(prefix="om-bench-worker-"))
    process = WorkerProcess(BOOTSTRAP, f"bench-{uuid.uuid4().hex[:8]}", config, workdir,
                            extra_env={"OM_LLM_CONCURRENCY": "4"})  # the default, not the tests' 1
    try:
        handles = []
        for role in roles:
            handle = await asyncio.to_thread(process.start, role)
            handles.append(handle)
            if pids is not None and handle.proc is not None:
                pids[role] = handle.proc.pid
        topics = Topics.for_prefix(process.prefix)
        async with Arrivals(BOOTSTRAP, topics.events) as arrivals:
            warm = ChatMessage(id="warm-up", thread_id="warm-up", resource_id="warm-up", role="user",
                               created_at=1, parts=[{"type": "text", "text": "hello"}])
            await produce(BOOTSTRAP, topics.messages, keyed([warm]))
            await arrivals.wait_all(["warm-up"], deadline_s=120)
            await settled([h.proc.pid for h in handles if h.proc is not None])
            yield topics, arrivals
    finally:
        process.stop()
        shutil.rmtree(workdir, ignore_errors=True)
