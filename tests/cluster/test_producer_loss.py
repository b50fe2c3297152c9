"""Issue 26 on the three-node cluster: the node leading the messages partitions is killed (-9) while
the SDK's ``send_many`` produces a few thousand messages, then restarted. The sends ride through
the leader election (and ``NotEnoughReplicas`` while only two replicas are left of three with
``min.insync.replicas=2``, should it come) — every message is on the messages topic exactly once.

The single-broker version (tests/faults/test_producer_broker_loss.py) also checks how the outage
reaches the log; here the point is the election and the replicas.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

import pytest

from streams.sdk.client import OMClient
from streams.services.kafka_cluster import LocalKafkaCluster
from streams.settings import Settings
from streams.topics import Topics
from streams.worker import ensure_topics
from tests.cluster.helpers import describe, wait_in_sync
from tests.faults.conftest import FaultReport
from tests.faults.test_producer_broker_loss import PER_BATCH, ids_on_topic, messages, send_batches, wait_until

pytestmark = pytest.mark.integration

BATCHES = 12  # 3,000 messages in 12 send_many calls


async def test_send_many_rides_through_the_messages_leader_killed_and_restarted(
    kafka_cluster: LocalKafkaCluster, tmp_path: Path, fault: FaultReport
) -> None:
    run = uuid.uuid4().hex[:8]
    settings = await ensure_topics(Settings(kafka_bootstrap=kafka_cluster.bootstrap, topic_prefix=f"ploss{run}",
                                            partitions=2, data_dir=tmp_path))
    assert settings.replication == 3, "the cluster's topics must have three replicas"
    topic = Topics.for_prefix(settings.topic_prefix).messages
    lines: list[str] = []
    acknowledged: list[int] = []
    killed: list[int] = []
    try:
        async with OMClient(settings, scope="thread", report=lines.append) as client:
            sending = send_batches(client, run, BATCHES, acknowledged)
            await wait_until(lambda: len(acknowledged) >= 2 or sending.done(), 60, "two batches acknowledged")
            assert not sending.done(), "everything was sent before the leader could be killed"
            leader = (await describe(kafka_cluster.bootstrap, settings.topic_prefix))[(topic, 0)][0]
            assert kafka_cluster.node(leader).kill(), f"node {leader} was not running"
            killed.append(leader)
            fault.broke(f"kill -9 of node {leader}, leader of {topic.removeprefix(settings.topic_prefix)}[0], "
                        f"after {len(acknowledged)} of {BATCHES} send_many calls were acknowledged")
            await wait_until(lambda: len(acknowledged) >= 6 or sending.done(), 120,
                             "sends went on with a node down")
            began = time.monotonic()
            await asyncio.to_thread(kafka_cluster.node(leader).start)
            fault.broke(f"node {leader} restarted while the sends go on")
            await asyncio.wait_for(sending, 180)
            took = await wait_in_sync(kafka_cluster.bootstrap, settings.topic_prefix, leader, deadline_s=90)
            fault.checked(f"node {leader} back in every ISR {time.monotonic() - began - took:.1f}+{took:.1f} s "
                          "after its restart")
        assert acknowledged == list(range(BATCHES))
        ids = await ids_on_topic(kafka_cluster.bootstrap, topic, BATCHES * PER_BATCH)
        assert len(ids) == len(set(ids)) == BATCHES * PER_BATCH, \
            f"{len(ids)} records, {len(set(ids))} distinct, {BATCHES * PER_BATCH} sent"
        fault.checked(f"all {len(ids):,} messages on the messages topic exactly once "
                      f"({len(lines)} progress line(s): {lines[:2]})")
    finally:
        if killed:  # the next cluster test needs all three (start does nothing for a running node)
            await asyncio.to_thread(kafka_cluster.node(killed[0]).start)


async def test_om_replay_rides_through_the_messages_leader_killed_mid_replay(
    kafka_cluster: LocalKafkaCluster, tmp_path: Path, fault: FaultReport
) -> None:
    """The issue's first symptom: ``om replay`` died on its first try with a NodeNotReadyError
    traceback right after a kill. The real command, a node killed -9 while it produces."""
    import os
    import subprocess
    import sys

    import orjson
    from aiokafka import AIOKafkaConsumer, TopicPartition

    run = uuid.uuid4().hex[:8]
    settings = await ensure_topics(Settings(kafka_bootstrap=kafka_cluster.bootstrap, topic_prefix=f"rloss{run}",
                                            partitions=2, data_dir=tmp_path))
    topic = Topics.for_prefix(settings.topic_prefix).messages
    source = tmp_path / "history.jsonl"
    total = 3_000
    source.write_bytes(b"\n".join(orjson.dumps(m) for batch in range(total // PER_BATCH)
                                  for m in messages(batch, run)) + b"\n")
    env = {**os.environ, "OM_KAFKA_BOOTSTRAP": kafka_cluster.bootstrap, "OM_TOPIC_PREFIX": settings.topic_prefix,
           "OM_PARTITIONS": "2", "OM_DATA_DIR": str(tmp_path / "data")}
    command = [sys.executable, "-m", "streams.cli", "replay", str(source), "--rate", "400", "--batch", "100"]
    replaying = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    killed: list[int] = []
    watcher = AIOKafkaConsumer(bootstrap_servers=kafka_cluster.bootstrap, group_id=None)
    await watcher.start()
    try:
        partitions = [TopicPartition(topic, p) for p in range(2)]

        async def on_topic() -> int:
            return sum((await watcher.end_offsets(partitions)).values())

        began = time.monotonic()
        while await on_topic() < 600:
            assert replaying.poll() is None, "the replay ended before the kill"
            assert time.monotonic() - began < 60, "the replay did not get going"
            await asyncio.sleep(0.05)
        leader = (await describe(kafka_cluster.bootstrap, settings.topic_prefix))[(topic, 0)][0]
        assert kafka_cluster.node(leader).kill(), f"node {leader} was not running"
        killed.append(leader)
        fault.broke(f"kill -9 of node {leader}, leader of messages[0], with {await on_topic()} of {total:,} "
                    "messages replayed")
    finally:
        await watcher.stop()
    try:
        out, err = await asyncio.to_thread(replaying.communicate, timeout=180)
        text = out.decode(errors="replace") + err.decode(errors="replace")
        assert replaying.returncode == 0, f"om replay exited {replaying.returncode}:\n{text[-2000:]}"
        assert "Traceback" not in text
        ids = await ids_on_topic(kafka_cluster.bootstrap, topic, total)
        assert len(ids) == len(set(ids)) == total, f"{len(ids)} records, {len(set(ids))} distinct, {total} sent"
        fault.checked(f"om replay finished on its first run (exit 0, no traceback); all {total:,} messages on the "
                      "topic exactly once")
    finally:
        await asyncio.to_thread(kafka_cluster.node(killed[0]).start)
