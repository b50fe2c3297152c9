"""Lifecycle events as an async iterator, filtered by type, thread and resource.

The events topic is read with ``read_committed``, so an app only ever sees events of committed
processor transactions — the same ones the ClickHouse sink materialises. There is no consumer
group: every stream reads every partition from a chosen point, and nothing is committed.

The starting point is fixed when the stream *starts* (``async with`` or the first iteration),
not when the first record arrives: ``since="now"`` resolves and pins every partition's end offset
up front, so an event caused by a message sent after ``start()`` can never slip past the stream.

A broker that is away or electing a leader delays starting and polling (progress lines to
``report``, :func:`~streams.services.kafka_retry.ride_through`); the consumer keeps its positions,
so nothing is skipped or shown twice. Past ``retry_s`` seconds it raises ``KafkaUnavailable``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Literal, TypeVar

from aiokafka import AIOKafkaClient, AIOKafkaConsumer, TopicPartition

from schemas.base import SchemaError
from schemas.lifecycle import LifecycleEvent, decode_event
from streams.services.kafka_retry import Deadline, Report, ride_through
from streams.services.kafka_topics import metadata

log = logging.getLogger(__name__)
T = TypeVar("T")

Since = Literal["now", "beginning"] | int  # int = UTC epoch ms: events written at or after it


async def topic_partitions(bootstrap: str, topic: str) -> list[TopicPartition]:
    """Every partition of ``topic``, from the broker (a consumer knows only what it subscribed to).
    Asking never creates the topic: a broker that auto-creates topics would make it with its default
    partitions, and the worker would then find it made."""
    client = AIOKafkaClient(bootstrap_servers=bootstrap)
    await client.bootstrap()
    try:
        (described,) = (await metadata(client, [topic])).to_object()["topics"]
    finally:
        await client.close()
    if described["error_code"] != 0 or not described["partitions"]:
        raise LookupError(f"topic {topic} does not exist; start a worker (om run) or check OM_TOPIC_PREFIX")
    return [TopicPartition(topic, p["partition"]) for p in sorted(described["partitions"], key=lambda p: p["partition"])]


class EventStream:
    """``async with client.events(types=["observation-end"]) as events: async for ev in events``.

    A plain ``async for ev in client.events(...)`` works too; it starts on the first iteration.
    """

    def __init__(self, bootstrap: str, topic: str, *, types: Iterable[str] | None = None,
                 thread_id: str | None = None, resource_id: str | None = None, since: Since = "now",
                 poll_ms: int = 100, retry_s: float = 120.0, report: Report | None = None,
                 sleep: Callable[[float], Awaitable[object]] = asyncio.sleep) -> None:
        self.bootstrap, self.topic, self.since, self.poll_ms = bootstrap, topic, since, poll_ms
        self.retry_s, self.report, self.sleep = retry_s, report or _log_report, sleep
        self.types = frozenset(types) if types else None
        self.thread_id, self.resource_id = thread_id, resource_id
        self._consumer: AIOKafkaConsumer | None = None

    async def __aenter__(self) -> EventStream:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def __aiter__(self) -> AsyncIterator[LifecycleEvent]:
        return self._iterate()

    async def start(self) -> None:
        """Connect, assign every partition and pin the starting offsets (idempotent)."""
        if self._consumer is None:
            self._consumer = await self._ride(self._connect)

    async def _connect(self) -> AIOKafkaConsumer:
        consumer = AIOKafkaConsumer(bootstrap_servers=self.bootstrap, group_id=None, enable_auto_commit=False,
                                    isolation_level="read_committed", fetch_max_wait_ms=50,
                                    # a seek_to_beginning can lose to a reset to the default "latest" in flight
                                    auto_offset_reset="earliest" if self.since == "beginning" else "latest")
        try:
            await consumer.start()
            await self._assign(consumer)
        except BaseException:
            await consumer.stop()
            raise
        return consumer

    async def _ride(self, attempt: Callable[[], Awaitable[T]]) -> T:
        return await ride_through(attempt, bootstrap=self.bootstrap, deadline=Deadline(self.retry_s),
                                  report=self.report, sleep=self.sleep)

    async def stop(self) -> None:
        if self._consumer is not None:
            await self._consumer.stop()
            self._consumer = None

    async def next_batch(self) -> list[LifecycleEvent]:
        """The matching events that arrived within one poll (possibly none); starts the stream."""
        await self.start()
        assert self._consumer is not None
        found: list[LifecycleEvent] = []
        consumer = self._consumer
        for records in (await self._ride(lambda: consumer.getmany(timeout_ms=self.poll_ms))).values():
            for record in records:
                event = self._decode(record.value, record.partition, record.offset)
                if event is not None and self.matches(event):
                    found.append(event)
        return found

    def matches(self, event: LifecycleEvent) -> bool:
        return ((self.types is None or event.type in self.types)
                and (self.thread_id is None or event.thread_id == self.thread_id)
                and (self.resource_id is None or event.resource_id == self.resource_id))

    async def _iterate(self) -> AsyncIterator[LifecycleEvent]:
        owned = self._consumer is None
        try:
            while True:
                for event in await self.next_batch():
                    yield event
        finally:
            if owned:
                await self.stop()

    async def _assign(self, consumer: AIOKafkaConsumer) -> None:
        assigned = await topic_partitions(self.bootstrap, self.topic)
        consumer.assign(assigned)
        if self.since == "beginning":
            await consumer.seek_to_beginning(*assigned)
        elif self.since == "now":
            await consumer.seek_to_end(*assigned)
        else:
            await self._seek_to_time(consumer, assigned, int(self.since))
        for tp in assigned:
            await consumer.position(tp)  # resolve now: "now" means now, not the first fetch

    @staticmethod
    async def _seek_to_time(consumer: AIOKafkaConsumer, assigned: list[TopicPartition], at_ms: int) -> None:
        offsets = await consumer.offsets_for_times({tp: at_ms for tp in assigned})
        for tp in assigned:
            found = offsets.get(tp)
            if found is None:
                await consumer.seek_to_end(tp)
            else:
                consumer.seek(tp, found.offset)

    def _decode(self, value: bytes, partition: int, offset: int) -> LifecycleEvent | None:
        try:
            return decode_event(value)
        except SchemaError as error:
            log.warning("sdk.events.undecodable", extra={"topic": self.topic, "partition": partition,
                                                         "offset": offset, "field": error.field})
            return None


def _log_report(line: str) -> None:
    log.warning("sdk.events.retry", extra={"detail": line})
