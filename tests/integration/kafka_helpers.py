"""Small helpers for integration tests that talk to the real broker: fast settings, bounded reads."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer
from aiokafka.structs import ConsumerRecord

from streams.services.kafka import LocalKafkaBroker
from streams.settings import get_settings

# Short fetch waits keep each poll cheap; session/heartbeat are small but leave headroom for a
# busy 2-core machine, since no test here waits for a session to expire.
FAST_CONSUMER: dict[str, Any] = {
    "auto_offset_reset": "earliest",
    "enable_auto_commit": False,
    "fetch_max_wait_ms": 20,
    "session_timeout_ms": 3000,
    "heartbeat_interval_ms": 1000,
}


async def read_records(consumer: AIOKafkaConsumer, count: int, deadline_s: float = 20.0) -> list[ConsumerRecord]:
    """Poll until ``count`` records arrived; fails the test with what did arrive on timeout."""
    records: list[ConsumerRecord] = []
    deadline = time.monotonic() + deadline_s
    while len(records) < count:
        if time.monotonic() > deadline:
            raise AssertionError(f"expected {count} records within {deadline_s} s, got {len(records)}")
        for batch in (await consumer.getmany(timeout_ms=100)).values():
            records.extend(batch)
    return records


async def read_until(bootstrap: str, topic: str, until: bytes, isolation: str = "read_committed") -> list[bytes]:
    """Values up to and including ``until``: a committed marker proves everything before it was seen."""
    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=bootstrap, group_id=None, isolation_level=isolation, **FAST_CONSUMER
    )
    await consumer.start()
    values: list[bytes] = []
    try:
        while until not in values:
            values.extend(r.value for r in await read_records(consumer, 1))
    finally:
        await consumer.stop()
    return values


def private_broker(tmp_path: Path) -> LocalKafkaBroker:
    """A second broker on free ports that reuses the already resolved jars (if any: with the docker
    backend it resolves its own on start)."""
    shared = LocalKafkaBroker.from_settings(get_settings())
    home = tmp_path / "kafka"
    home.mkdir()
    if (shared.home / "lib").is_dir():
        (home / "lib").symlink_to(shared.home / "lib")
    return LocalKafkaBroker(home=home, port=_free_port_pair())


def _free_port_pair() -> int:
    """A port p with p + 1 free too (the controller listens there)."""
    for _ in range(50):
        with socket.socket() as a:
            a.bind(("127.0.0.1", 0))
            port = a.getsockname()[1]
            with socket.socket() as b:
                try:
                    b.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
                return port
    raise RuntimeError("no two adjacent free ports on 127.0.0.1")
