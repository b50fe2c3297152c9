"""Driving a real worker (``om run``) from outside, as an app would: the tests and the benchmarks share it.

* :class:`WorkerProcess` starts workers as child processes, each with its own ports and chDB
  directory, and kills, restarts or stops them.
* :class:`EventLog` reads a topic (read_committed) in the background, grouped by key.
* :func:`drop_topics` deletes a worker's topics (a worker's teardown does).
* :func:`produce` sends keyed records with the idempotent producer and waits for every ack.
* :func:`signature` is what must match between the core's run and the pipeline's.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from schemas.lifecycle import decode_event
from streams.harness.worker_log import log_events
from streams.services.kafka_health import port_accepts
from streams.services.kafka_topics import delete_topics
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
    clickhouse_dsn: str = ""
    """Empty: each worker embeds its own chDB (sink and reader in the worker). An ``http://`` DSN is
    the scale-out shape: ClickHouse is a server that a separate sink and reader use, so the worker
    never opens it (runs that check the topics only need no sink at all)."""

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
            "OM_STATE_SNAPSHOT_S": "1",  # a kill -9 restart adopts a snapshot: the fault tests run that path
            **self.extra_env,
        }

    def settings(self) -> Settings:
        env = self.env()
        return Settings(kafka_bootstrap=self.bootstrap, topic_prefix=self.prefix, model=self.model,
                        config_file=Path(env["OM_CONFIG_FILE"]), partitions=self.partitions,
                        data_dir=self.workdir / "data")

    def start(self, role: str = "all") -> WorkerHandle:
        """Start one more worker (each with its own ports and chDB directory)."""
        handle = self._handle(role)
        handle.start(f"http://127.0.0.1:{handle.env['OM_WEB_PORT']}/")
        return handle

    def start_many(self, count: int, role: str = "all") -> list[WorkerHandle]:
        """Start ``count`` more workers at once and wait until each answers: they join the group
        together instead of rebalancing once per start."""
        handles = [self._handle(role) for _ in range(count)]
        with ThreadPoolExecutor(max_workers=count) as pool:
            list(pool.map(lambda h: h.start(f"http://127.0.0.1:{h.env['OM_WEB_PORT']}/"), handles))
        return handles

    def _handle(self, role: str) -> WorkerHandle:
        n = len(self.handles)
        web, reader = self._unused_ports(2)
        env = {**self.env(), "OM_WEB_PORT": str(web), "OM_READER_PORT": str(reader),
               "OM_CLICKHOUSE_DSN": self.clickhouse_dsn or f"chdb://{self.workdir / f'clickhouse-{n}'}"}
        handle = WorkerHandle(env, self.workdir / f"worker-{n}.log", role)
        self.handles.append(handle)
        return handle

    def _unused_ports(self, count: int) -> list[int]:
        """Free ports no handle holds yet: workers started together bind theirs only later, and
        the kernel may offer a just-released port again (two workers on one web port: the health
        check would pass on the other's)."""
        taken = {int(h.env[name]) for h in self.handles for name in ("OM_WEB_PORT", "OM_READER_PORT")}
        ports: list[int] = []
        while len(ports) < count:
            port = free_port()
            if port not in taken and port not in ports:
                ports.append(port)
        return ports

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
        """Teardown: kill -9, then delete the workers' topics. Nothing is checked after it, every test
        has its own topics and group, and exactly-once makes a kill as safe as a graceful stop (the
        fault tests show it), which cost 2-7 s a test. A test that stops a worker on purpose calls its
        handle's ``stop``. Topics left behind on a shared broker made every later client's first
        metadata answer (all topics) slower to decode: the same nine tests took 69 s beside ~1,000
        earlier tests' topics and 54 s without them."""
        for handle in self.handles:
            handle.kill()
        with ThreadPoolExecutor(max_workers=1) as pool:  # a loop of its own: callers may be inside one
            pool.submit(asyncio.run, drop_topics(self.bootstrap, self.prefix)).result()


async def drop_topics(bootstrap: str, prefix: str, timeout: float = 10.0) -> None:
    """Delete the topics of the workers with ``prefix`` (``<prefix>.…`` and Faust's ``<prefix>-…``);
    nothing, and no wait, when the broker does not answer (a fault test's own broker, stopped)."""
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    if await asyncio.to_thread(port_accepts, host, int(port)):
        await asyncio.wait_for(delete_topics(bootstrap, (), prefixes=(f"{prefix}.", f"{prefix}-")), timeout)


class EventLog:
    """Reads a topic (read_committed) in the background, decoded and grouped by key: the events
    topic by default, the records topic with ``decoder=decode_delta``."""

    def __init__(self, bootstrap: str, topic: str, decoder: Callable[[bytes], Any] = decode_event) -> None:
        self.bootstrap, self.topic, self.decoder = bootstrap, topic, decoder
        self.by_key: dict[str, list[Any]] = defaultdict(list)
        self.arrivals: list[tuple[str, Any]] = []  # (key, decoded value) across keys, as read
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
                    key, value = record.key.decode(), self.decoder(record.value)
                    self.by_key[key].append(value)
                    self.arrivals.append((key, value))

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


async def next_log_event(log: Path, event: str, deadline_s: float, what: str) -> dict:
    """The first ``event`` entry ``log`` gains from now on, waited for (``what`` names it if none comes)."""
    seen = len(log_events(log, event))
    await wait_until(lambda: len(log_events(log, event)) > seen, deadline_s, what)
    return log_events(log, event)[seen]


async def produce(bootstrap: str, topic: str, items: list[tuple[str, bytes]]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True, linger_ms=5)
    await producer.start()
    try:
        for key, value in items:
            await producer.send(topic, value, key=key.encode())
        await producer.flush()
    finally:
        await producer.stop()
