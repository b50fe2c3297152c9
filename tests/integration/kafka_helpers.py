"""Small helpers for integration tests that talk to the real broker: fast settings, bounded reads."""

from __future__ import annotations

import time
from typing import Any

from aiokafka import AIOKafkaConsumer
from aiokafka.structs import ConsumerRecord

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

