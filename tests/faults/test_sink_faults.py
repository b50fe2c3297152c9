"""The ClickHouse sink broken on purpose: the database refusing inserts, the sink killed mid-batch.

After each fault the tables must equal those an undisturbed sink writes from the same topics —
the context rows included, so the reader's contexts after a kill -9 and replay are the core's own.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import orjson
import pytest

from streams.reader import Reader
from streams.sink import Sink, SinkOptions
from tests.faults.conftest import FaultReport
from tests.integration.om_pipeline import (
    FAST_SINK,
    committed_total,
    core_context,
    database_client,
    make_topics,
    publish,
    reflective_conversation,
    sink_until_drained,
    table_dump,
    wait_committed,
)
from tests.unit.machine.core_driver import T0

pytestmark = pytest.mark.integration
REPO_ROOT = Path(__file__).resolve().parents[2]


async def test_clickhouse_unavailable_pauses_the_sink_and_loses_nothing(kafka_bootstrap, clickhouse_dsn, new_topic,
                                                                      fault: FaultReport):
    talk = reflective_conversation(threads=1, messages=60)
    topics = await make_topics(new_topic)
    total = await publish(kafka_bootstrap, topics, talk)
    reference = database_client(clickhouse_dsn)
    await sink_until_drained(reference, kafka_bootstrap, topics, total)

    client = database_client(clickhouse_dsn)
    client.command("DETACH TABLE om_records")
    group = f"outage-{uuid.uuid4().hex[:8]}"
    sink = Sink(client, kafka_bootstrap, topics, SinkOptions(group_id=group, max_wait_ms=50, retry_initial_s=0.05,
                                                             retry_max_s=0.2, consumer=FAST_SINK))
    await sink.start()
    try:
        deadline = time.monotonic() + 30
        while sink.stats.retries < 5:
            assert time.monotonic() < deadline, "the sink never retried"
            await asyncio.sleep(0.02)
        fault.broke(f"ClickHouse refused every insert (om_records detached) for {sink.stats.retries} retries")
        assert await committed_total(kafka_bootstrap, group, topics) == 0
        assert sink.stats.dead_letters == 0
        client.command("ATTACH TABLE om_records")
        await wait_committed(kafka_bootstrap, group, topics, total, 30)
    finally:
        await sink.stop()
    assert table_dump(client) == table_dump(reference)
    fault.checked("no offset committed and no dead letter while ClickHouse was down; once back, every table "
                  "equals an undisturbed sink's")


def _child(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "tests.integration.sink_process", *args], cwd=REPO_ROOT,
                            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _dump_in_child(dsn: str) -> str:
    child = _child("dump", dsn)
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    return out.strip()


async def test_sink_killed_mid_batch_and_restarted_loses_and_duplicates_nothing(
        kafka_bootstrap, clickhouse_dsn, new_topic, tmp_path, fault: FaultReport):
    talk = reflective_conversation(threads=4, messages=150)
    topics = await make_topics(new_topic)
    total = await publish(kafka_bootstrap, topics, talk)
    dsn = f"chdb://{tmp_path / 'killed'}"
    group = f"killed-{uuid.uuid4().hex[:8]}"
    args = ("run", dsn, kafka_bootstrap, orjson.dumps(dataclasses.asdict(topics)).decode(), group, "100")

    first = _child(*args)
    deadline = time.monotonic() + 60
    while (done := await committed_total(kafka_bootstrap, group, topics)) == 0:
        assert first.poll() is None, first.stderr.read() if first.stderr else ""
        assert time.monotonic() < deadline, "the sink committed nothing"
        await asyncio.sleep(0.01)
    first.send_signal(signal.SIGKILL)
    first.wait()
    assert 0 < done < total, f"killed too late to prove anything: {done} of {total}"
    fault.broke(f"kill -9 of the sink after {done} of {total} records were committed")

    second = _child(*args)
    try:
        await wait_committed(kafka_bootstrap, group, topics, total, 60)
    finally:
        second.send_signal(signal.SIGKILL)
        second.wait()

    reference = database_client(clickhouse_dsn)
    await sink_until_drained(reference, kafka_bootstrap, topics, total)
    assert _dump_in_child(dsn) == repr(table_dump(reference))
    reader, now = Reader(reference, talk.config), T0 + 86_400_000
    for thread, resource in sorted({(m.thread_id, m.resource_id) for _, m in talk.messages}):
        assert await reader.context(thread, resource, now_ms=now) == core_context(talk, thread, now)
    fault.checked("a restarted sink finished the topics; every table, context rows included, equals an "
                  "undisturbed sink's, whose contexts are the core's")
