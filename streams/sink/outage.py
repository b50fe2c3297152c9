"""ClickHouse down is a pause, not a failure (streams/sink/service.py): the probe that tells an
outage from a record ClickHouse refuses, and the wait that keeps the sink in its group meanwhile."""

from __future__ import annotations

import asyncio

from aiokafka import AIOKafkaConsumer
from clickhouse_connect.driver.client import Client

from streams.sink.rows import TABLE_ORDER


async def clickhouse_healthy(client: Client) -> bool:
    """Reachable, and every table there: only then is a refused record the record's fault."""
    try:
        present = await asyncio.to_thread(
            client.command,
            "SELECT count() FROM system.tables WHERE database = currentDatabase() AND name IN {names:Array(String)}",
            parameters={"names": [*TABLE_ORDER, "om_contexts"]},
        )
    except Exception:  # noqa: BLE001 - unhealthy is the answer, whatever the error
        return False
    return int(present) == len(TABLE_ORDER) + 1


async def paused_wait(consumer: AIOKafkaConsumer, seconds: float) -> None:
    """Wait while staying in the group: poll paused partitions instead of sleeping."""
    assigned = consumer.assignment()
    consumer.pause(*assigned)
    try:
        await consumer.getmany(timeout_ms=int(seconds * 1000))
    finally:
        consumer.resume(*consumer.assignment())
