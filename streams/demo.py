"""`om demo`: prove the local stack end to end with one chat message.

It makes sure the broker is up, creates the demo topic, produces a ``ChatMessage`` keyed by its
thread, consumes it back in a consumer group and commits, then writes it to ClickHouse and reads
it back. Every step prints what it did, so a newcomer sees each moving part work once.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, datetime

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from rich.console import Console
from rich.table import Table

from schemas.base import decode
from schemas.messages import ChatMessage, TextPart
from streams.services.errors import ServiceError
from streams.services.kafka import LocalKafkaBroker
from streams.services.kafka_health import is_healthy
from streams.services.kafka_topics import create_topics
from streams.settings import Settings, get_settings

DEMO_TABLE = "demo_messages"
CONSUME_DEADLINE_S = 30.0


def run_demo(settings: Settings | None = None, console: Console | None = None) -> int:
    """Run every step; returns the process exit code (0 = all steps worked)."""
    settings = settings or get_settings()
    console = console or Console()
    try:
        _ensure_broker(settings, console)
        message = ChatMessage(
            id=f"demo-{uuid.uuid4().hex[:12]}",
            thread_id="demo-thread",
            role="user",
            created_at=int(time.time() * 1000),
            parts=[TextPart(text="Hello from om demo: remember that I prefer short answers.")],
        )
        topic = f"{settings.topic_prefix}.demo.v1"
        steps = asyncio.run(_kafka_round_trip(settings.kafka_bootstrap, topic, message))
        steps.append(_clickhouse_round_trip(settings.clickhouse_dsn, message))
    except (ServiceError, DemoFailed) as exc:
        console.print(f"[red]✗[/] {exc}")
        return 1
    table = Table(title="om demo", show_lines=False)
    table.add_column("step")
    table.add_column("result")
    for step, result in steps:
        table.add_row(step, result)
    console.print(table)
    console.print("[green]✓[/] Kafka and ClickHouse round trip complete")
    return 0


class DemoFailed(RuntimeError):
    """A demo step did not produce what it should have; the message says which and why."""


def _ensure_broker(settings: Settings, console: Console) -> None:
    host = settings.kafka_bootstrap.split(",")[0].rsplit(":", 1)[0]
    if host in ("127.0.0.1", "localhost"):
        LocalKafkaBroker.from_settings(settings).start(console)
    elif not is_healthy(settings.kafka_bootstrap):
        raise ServiceError(f"Kafka at {settings.kafka_bootstrap} does not answer; check OM_KAFKA_BOOTSTRAP")


async def _kafka_round_trip(bootstrap: str, topic: str, message: ChatMessage) -> list[tuple[str, str]]:
    await create_topics(bootstrap, [topic], partitions=3)
    key = f"thread:{message.thread_id}".encode()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True)
    await producer.start()
    try:
        sent = await producer.send_and_wait(topic, message.to_bytes(), key=key)
    finally:
        await producer.stop()
    received, committed = await _consume_until(bootstrap, topic, message.id)
    if received != message:
        raise DemoFailed(f"message {message.id} came back different from what was produced")
    return [
        ("topic", f"{topic} (3 partitions)"),
        ("produced", f"{message.id} key={key.decode()} → partition {sent.partition} offset {sent.offset}"),
        ("consumed", "group om-demo read it back and it decodes to the same ChatMessage"),
        ("committed", f"group om-demo offset {committed} on partition {sent.partition}"),
    ]


async def _consume_until(bootstrap: str, topic: str, message_id: str) -> tuple[ChatMessage, int]:
    """Read in group ``om-demo`` (from its last commit) until ``message_id`` arrives, then commit."""
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id="om-demo",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        fetch_max_wait_ms=50,
        session_timeout_ms=6000,
        heartbeat_interval_ms=2000,
    )
    await consumer.start()
    try:
        deadline = time.monotonic() + CONSUME_DEADLINE_S
        while time.monotonic() < deadline:
            batches = await consumer.getmany(timeout_ms=200)
            for partition, records in batches.items():
                for record in records:
                    if record.value is None:
                        continue
                    candidate = decode(ChatMessage, record.value)
                    if candidate.id == message_id:
                        await consumer.commit({partition: record.offset + 1})
                        return candidate, await consumer.committed(TopicPartition(topic, partition.partition))
            if batches:
                await consumer.commit()
        raise DemoFailed(f"message {message_id} was not consumed within {CONSUME_DEADLINE_S:.0f} s")
    finally:
        await consumer.stop()


def _clickhouse_round_trip(dsn: str, message: ChatMessage) -> tuple[str, str]:
    from streams.clickhouse import connect, redact

    client = connect(dsn)
    client.command(
        f"CREATE TABLE IF NOT EXISTS {DEMO_TABLE} (id String, thread_id String, role String, "
        "created_at DateTime64(3, 'UTC'), body String) ENGINE = ReplacingMergeTree ORDER BY (thread_id, id)"
    )
    client.insert(
        DEMO_TABLE,
        [[message.id, message.thread_id, message.role, _utc(message.created_at), message.to_bytes().decode()]],
        column_names=["id", "thread_id", "role", "created_at", "body"],
    )
    rows = client.query(
        f"SELECT body FROM {DEMO_TABLE} FINAL WHERE id = {{id:String}}", parameters={"id": message.id}
    ).result_rows
    if [decode(ChatMessage, row[0]) for row in rows] != [message]:
        raise DemoFailed(f"ClickHouse returned {len(rows)} rows for {message.id}, expected exactly the one written")
    total = client.command(f"SELECT count() FROM {DEMO_TABLE}")
    return "clickhouse", f"row written and read back via {redact(dsn)} ({total} demo rows so far)"


def _utc(epoch_ms: int) -> datetime:
    return datetime.fromtimestamp(epoch_ms / 1000, tz=UTC)
