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
from tests.faults.test_producer_broker_loss import PER_BATCH, ids_on_topic, messages, wait_until

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
            async def send_all() -> None:
                for batch in range(BATCHES):
                    await client.send_many(messages(batch, run))
                    acknowledged.append(batch)

            sending = asyncio.create_task(send_all())
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
