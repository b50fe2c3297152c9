"""Faust tables with ``processing_guarantee='exactly_once'`` work against the pinned broker.

A counting worker runs as a real subprocess, with streams/recovery.py's table manager as the
workers run it; after a graceful restart it must rebuild its table from the changelog and carry on
counting, read_committed readers of its output must see each count exactly once, and the rebuild of
a changelog ending in a commit marker ends within seconds (Faust's own manager, which no worker
runs, waits out two 5-second polls: its test here took 18 s and was dropped on 2026-12-07).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from streams.services.kafka_topics import delete_topics
from streams.settings import PROJECT_ROOT
from tests.integration.kafka_helpers import FAST_CONSUMER, read_records

pytestmark = pytest.mark.integration

READY_LINE = "[^Worker]: Ready"
RECOVERY_STARTED, RECOVERY_DONE = "Restoring state from changelog topics", "Done reading from changelog topics"
RECOVERY_DEADLINE_S = 3.0  # Faust's own recovery needs at least 10 s here


def _app_env(bootstrap: str, source: str, sink: str, data_dir: Path, **extra: str) -> dict[str, str]:
    """The counter app's settings: a fresh app id (so a fresh group and changelog) on these topics,
    its data directory in the test's own (not the working directory)."""
    return {"FAUST_TEST_BROKER": bootstrap, "FAUST_TEST_APP_ID": f"om-test-eos-{uuid.uuid4().hex[:8]}",
            "FAUST_TEST_SOURCE": source, "FAUST_TEST_SINK": sink, "FAUST_TEST_DATA_DIR": str(data_dir), **extra}


async def test_a_restarted_worker_rebuilds_its_table_within_seconds_with_the_prompt_recovery(
    kafka_bootstrap: str, new_topic, tmp_path: Path
) -> None:
    source, sink = await new_topic(partitions=2), await new_topic(partitions=2)
    env = _app_env(kafka_bootstrap, source, sink, tmp_path / "data",
                   FAUST_TEST_TABLE_MANAGER="streams.recovery:PromptTableManager")
    try:
        with _worker(env, tmp_path / "worker-1.log"):
            await _produce(kafka_bootstrap, source, 10)
            await _read_counts(kafka_bootstrap, sink, 10)
        log = tmp_path / "worker-2.log"
        with _worker(env, log, ready_line=RECOVERY_STARTED):
            await _wait_for_line(log, RECOVERY_DONE, RECOVERY_DEADLINE_S)
            await _produce(kafka_bootstrap, source, 6)
            both = await _read_counts(kafka_bootstrap, sink, 16)
    finally:  # the app's own topics (its changelog, its assignor's) stay off the shared broker
        await delete_topics(kafka_bootstrap, (), prefixes=(f"{env['FAUST_TEST_APP_ID']}-",))

    assert both == {b"k0": list(range(1, 9)), b"k1": list(range(1, 9))}, (
        "the table lost its last committed counts; the restarted worker's recovery:\n" + _recovery_lines(log))


def _recovery_lines(log: Path) -> str:
    """The recovery's part of a worker's log (its highwaters and read positions per partition): a
    failure here was seen once and its logs were gone by the time they were looked for."""
    lines = log.read_text(errors="replace").splitlines()
    marks = [n for n, line in enumerate(lines) if "PromptRecovery" in line or "Recovery" in line]
    return "\n".join(lines[marks[0]:marks[-1] + 1]) if marks else "(no recovery lines)"


async def _wait_for_line(log: Path, line: str, deadline_s: float) -> None:
    deadline = time.monotonic() + deadline_s
    while line not in log.read_text(errors="replace"):
        assert time.monotonic() < deadline, f"{line!r} not in the worker log within {deadline_s} s"
        await asyncio.sleep(0.05)


async def _produce(bootstrap: str, topic: str, count: int) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True)
    await producer.start()
    try:
        for i in range(count):
            await producer.send(topic, b"x", key=f"k{i % 2}".encode())
        await producer.flush()
    finally:
        await producer.stop()


async def _read_counts(bootstrap: str, topic: str, count: int) -> dict[bytes, list[int]]:
    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=bootstrap, group_id=None, isolation_level="read_committed", **FAST_CONSUMER
    )
    await consumer.start()
    try:
        records = await read_records(consumer, count, deadline_s=45.0)
    finally:
        await consumer.stop()
    by_key: dict[bytes, list[int]] = {}
    for record in sorted(records, key=lambda r: (r.partition, r.offset)):
        by_key.setdefault(record.key, []).append(int(record.value))
    return by_key


class _worker:
    """``with _worker(env, log):`` a Faust worker subprocess, ready on entry, stopped (SIGTERM) on exit.

    "Ready" is logged once recovery is done; ``ready_line`` may name an earlier line."""

    def __init__(self, env: dict[str, str], log: Path, ready_line: str = READY_LINE) -> None:
        self._env, self._log, self._ready_line = env, log, ready_line

    def __enter__(self) -> subprocess.Popen[bytes]:
        with self._log.open("wb") as out:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "faust", "-A", "tests.integration.faust_counter_app", "worker", "-l", "info"],
                cwd=PROJECT_ROOT,
                env={**os.environ, **self._env},
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 60
        while self._ready_line not in self._log.read_text(errors="replace"):
            if self._proc.poll() is not None or time.monotonic() > deadline:
                self._stop()
                raise AssertionError(f"Faust worker not ready:\n{self._log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.1)
        return self._proc

    def __exit__(self, *exc: object) -> None:
        self._stop()

    def _stop(self) -> None:
        if self._proc.poll() is None:
            self._proc.send_signal(signal.SIGTERM)
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
