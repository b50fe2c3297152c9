"""Hanging transactions made on purpose: what a broker that forgets a transaction leaves behind.

The real race (a single broker's controlled shutdown accepting a batch whose transaction it never
persists, README) is rare and timing-bound. With the broker's partition verification (KIP-890)
switched off, a batch written under a fresh producer id without ever adding its partition to a
transaction is exactly that state, made deterministically.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from aiokafka import AIOKafkaClient
from aiokafka.client import CoordinationType
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.errors import for_code
from aiokafka.protocol.produce import ProduceRequest
from aiokafka.protocol.transaction import InitProducerIdRequest
from aiokafka.record.default_records import DefaultRecordBatchBuilder
from aiokafka.structs import TopicPartition

from streams.services.txn_cleanup import list_transactions

VERIFICATION = "transaction.partition.verification.enable"


@asynccontextmanager
async def partition_verification_off(bootstrap: str) -> AsyncIterator[None]:
    """The broker accepts transactional writes to partitions no transaction added, meanwhile."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    node = str(next(iter(admin._client.cluster.brokers())).nodeId)
    try:
        await admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, node, {VERIFICATION: "false"})])
        yield
    finally:
        await admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, node, {VERIFICATION: "true"})])
        await admin.close()


CONCURRENT_TRANSACTIONS = 51


async def write_forgotten_batch(bootstrap: str, transactional_id: str, topic: str, value: bytes,
                                key: bytes | None = None, partition: int = 0) -> None:
    """What the broker did during its shutdown: a transactional batch the coordinator never heard of."""
    client = AIOKafkaClient(bootstrap_servers=bootstrap)
    await client.bootstrap()
    try:
        async def init_producer_id() -> tuple[int, Any]:
            coordinator = await client.coordinator_lookup(CoordinationType.TRANSACTION, transactional_id)
            init = await client.send(coordinator, InitProducerIdRequest(transactional_id, 60_000))
            return init.error_code, init

        init = await until_accepted(init_producer_id)
        batch = DefaultRecordBatchBuilder(2, 0, 1, init.producer_id, init.producer_epoch, 0, 1 << 20)
        batch.append(0, int(time.time() * 1000), key, value, [])
        records = bytes(batch.build())

        async def produce() -> tuple[int, Any]:
            await client.force_metadata_update()
            await client._wait_on_metadata(topic)
            leader = client.cluster.leader_for_partition(TopicPartition(topic, partition))
            produced = await client.send(leader, ProduceRequest(transactional_id, -1, 10_000, [(topic, [(partition, records)])]))
            return produced.topics[0][1][0][1], produced

        await until_accepted(produce)
    finally:
        await client.close()


async def until_accepted(request: Callable[[], Awaitable[tuple[int, Any]]], deadline_s: float = 30.0) -> Any:
    """Repeat a raw request while the broker answers a retriable error: a just-started broker's
    coordinators are still loading, a just-created topic's leader does not serve it yet, a killed
    producer's open transaction is still being aborted (CONCURRENT_TRANSACTIONS, which Kafka's own
    clients retry though aiokafka does not mark it retriable)."""
    deadline = time.monotonic() + deadline_s
    while True:
        error, response = await request()
        if error == 0:
            return response
        retriable = for_code(error).retriable or error == CONCURRENT_TRANSACTIONS
        assert retriable and time.monotonic() < deadline, response
        await asyncio.sleep(0.2)


async def transactional_ids(bootstrap: str, prefix: str) -> list[str]:
    """The transactional ids the broker knows that start with ``prefix`` (a worker's producers)."""
    client = AIOKafkaClient(bootstrap_servers=bootstrap)
    await client.bootstrap()
    try:
        return sorted(txn_id for txn_id in await list_transactions(client) if txn_id.startswith(prefix))
    finally:
        await client.close()
