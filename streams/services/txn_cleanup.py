"""Abort the pipeline's hanging transactions before a worker starts producing.

The shell around :mod:`streams.hanging_txns`. It runs in ``om run`` before Faust starts, because
the order matters: once the restarted worker's producer has initialised its transactional id
(same producer id, next epoch) and committed, the forgotten batch is committed with it. Written
markers are what the coordinator would have written; nothing is appended to any data topic.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from collections.abc import Iterable

from aiokafka import AIOKafkaClient
from aiokafka.client import CoordinationType
from aiokafka.cluster import ClusterMetadata
from aiokafka.errors import KafkaError, for_code
from aiokafka.structs import TopicPartition

from streams.hanging_txns import OpenTxn, abort_groups, hanging
from streams.services.kafka_topics import metadata
from streams.services.kafka_txn_protocol import (
    AbortMarkerRequest,
    DescribeProducersRequest,
    DescribeTransactionsRequest,
    ListTransactionsRequest,
)

log = logging.getLogger(__name__)
Leaders = dict[tuple[str, int], int | None]


class TxnCleanupError(RuntimeError):
    def __init__(self, message: str, retriable: bool = False) -> None:
        super().__init__(message)
        self.retriable = retriable


async def abort_hanging_transactions(bootstrap: str, topics: Iterable[str],
                                     retry_for_s: float = 60.0) -> list[OpenTxn]:
    """Abort every hanging transaction on the named ``topics`` (a name the cluster lacks is skipped).

    Returns what was aborted. Costs a few admin round trips when nothing hangs. A broker that has
    just restarted answers "coordinator loading" for a while, exactly when this matters most: the
    whole pass is retried (it judges afresh each time) until ``retry_for_s`` has passed.
    """
    deadline = time.monotonic() + retry_for_s
    names = sorted(set(topics))  # once: an iterator would be empty at a retry
    while True:
        try:
            return await _abort_hanging_once(bootstrap, names)
        except (TxnCleanupError, KafkaError) as error:
            if not error.retriable or time.monotonic() > deadline:
                raise
            log.info("om.txn.cleanup_retry", extra={"error": repr(error)})
            await asyncio.sleep(0.5)


async def _abort_hanging_once(bootstrap: str, topics: list[str]) -> list[OpenTxn]:
    client = AIOKafkaClient(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
    try:
        await client.bootstrap()
        cluster = ClusterMetadata()
        cluster.update_metadata(await metadata(client, topics))  # these topics only (streams/services/kafka_topics.py)
        leaders = {(t, p): cluster.leader_for_partition(TopicPartition(t, p))
                   for t in topics for p in cluster.partitions_for_topic(t) or ()}
        before = await _open_transactions(client, leaders)
        if not before:
            return []
        known = await _coordinator_partitions(client, {t.producer_id for t in before})
        found = hanging(before, known, await _open_transactions(client, leaders))
        if not found:
            return []
        for txn in found:
            log.warning("om.txn.hanging", extra={
                "action": "aborting: no coordinator will finish it", "partition": f"{txn.topic}/{txn.partition}",
                "producer_id": txn.producer_id, "producer_epoch": txn.producer_epoch,
                "start_offset": txn.start_offset})
        await _abort(client, leaders, found)
        left = hanging(found, {}, await _open_transactions(client, leaders))
        if left:
            raise TxnCleanupError(f"{len(left)} transaction(s) still open after their ABORT marker (first: {left[0]});"
                                  " abort it with kafka-transactions.sh abort")
        return found
    finally:
        await client.close()


async def _open_transactions(client: AIOKafkaClient, leaders: Leaders) -> list[OpenTxn]:
    by_leader: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for (topic, partition), leader in sorted(leaders.items()):
        if leader is not None and leader >= 0:
            by_leader[leader][topic].append(partition)
    found: list[OpenTxn] = []
    for leader, parts in by_leader.items():
        response = await client.send(leader, DescribeProducersRequest(sorted(parts.items())))
        for name, partitions, _ in response.topics:
            for index, error, _, producers, _ in partitions:
                if error:  # skipped, hence never judged hanging: a second look must see it open
                    kind = for_code(error)  # retriable: usually a topic created a moment ago
                    log.log(logging.INFO if kind.retriable else logging.WARNING, "om.txn.partition_skipped",
                            extra={"partition": f"{name}/{index}", "error": kind.__name__})
                    continue
                found += [OpenTxn(name, index, pid, epoch, coordinator_epoch, start)
                          for pid, epoch, _, _, coordinator_epoch, start, _ in producers if start >= 0]
    return found


async def _coordinator_partitions(client: AIOKafkaClient, producer_ids: set[int]
                                  ) -> dict[int, frozenset[tuple[str, int]]]:
    """What every coordinator believes about these producers' current transactions."""
    known: dict[int, frozenset[tuple[str, int]]] = {}
    for txn_id in await list_transactions(client, producer_ids):
        coordinator = await client.coordinator_lookup(CoordinationType.TRANSACTION, txn_id)
        response = await client.send(coordinator, DescribeTransactionsRequest([txn_id]))
        for error, _, _, _, _, pid, _, topics, _ in response.transaction_states:
            _raise_for(error, f"describing transaction {txn_id}")
            known[pid] = frozenset((topic, p) for topic, parts, _ in topics for p in parts)
    return known


async def list_transactions(client: AIOKafkaClient, producer_ids: set[int] | None = None) -> dict[str, int]:
    """Transactional id -> producer id, as every broker's coordinators know them (all of them
    without ``producer_ids``)."""
    found: dict[str, int] = {}
    for broker in client.cluster.brokers():
        response = await client.send(broker.nodeId, ListTransactionsRequest(sorted(producer_ids or ())))
        _raise_for(response.error_code, "listing transactions")
        found.update({txn_id: pid for txn_id, pid, _, _ in response.transaction_states})
    return found


async def _abort(client: AIOKafkaClient, leaders: Leaders, hanging: list[OpenTxn]) -> None:
    by_leader: dict[int, list[OpenTxn]] = defaultdict(list)
    for txn in hanging:
        by_leader[leaders[txn.topic, txn.partition]].append(txn)
    for leader, txns in by_leader.items():
        for (pid, epoch, coordinator_epoch), parts in abort_groups(txns).items():
            topics: dict[str, list[int]] = defaultdict(list)
            for topic, partition in parts:
                topics[topic].append(partition)
            response = await client.send(leader, AbortMarkerRequest(pid, epoch, coordinator_epoch,
                                                                    sorted(topics.items())))
            for _, results, _ in response.markers:
                for name, partitions, _ in results:
                    for index, error, _ in partitions:
                        _raise_for(error, f"aborting producer {pid} on {name}/{index}")


def _raise_for(error_code: int, doing: str) -> None:
    if error_code:
        error = for_code(error_code)
        raise TxnCleanupError(f"{doing}: {error.__name__}", retriable=error.retriable)
