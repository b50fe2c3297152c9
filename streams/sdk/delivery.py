"""Producing keyed records so that a broker loss delays a call instead of failing it (issue 26).

Rules kept:
* One idempotent producer (``acks=all``) per client. While a broker is away, aiokafka keeps every
  appended batch and re-sends it with its original sequence numbers, so the broker writes it once;
  this layer never re-sends a record that producer still holds.
* A record is produced again only when the producer gave it up: it was never appended (the buffer
  stayed full past the producer's timeout) or its batch failed with a transient error. Those go
  again in their original order, through the same producer; the message id keeps a repeat harmless.
* The producer is started through :func:`ride_through` (an unreachable bootstrap address waits).
* A call that finds no other call of this client sending puts its records into closed batches, one
  run per partition (``create_batch``/``send_batch``), which the producer sends at once: an agent's
  acknowledged send does not pay the producer's linger (issue 19). While other calls are sending,
  records go through ``send``, so concurrent calls share batches over the linger. Either way each
  key's records keep their order: one producer, one partition per key, batches queued in order.
  A closed batch's partition is the producer's own: its partitioner over the topic's partitions in
  order (murmur2 of the key, as the Java client's).
* While nothing is acknowledged for :data:`STALL_REPORT_S`, a progress line says so; once no
  record was acknowledged for ``deadline_s`` the call raises :class:`KafkaUnavailable`.
* **Only into a topic that exists.** aiokafka asks for a topic's metadata the first time it sends
  to it, in a way that lets the broker auto-create it (Kafka's default), with the broker's default
  partitions: an app that sent before any worker ran made the messages topic with one partition,
  and the worker then found it made. A client looks each topic up once first, without creating it
  (streams/services/kafka_topics.py); a missing one fails the call at once, saying to start a
  worker, as every missing topic does (streams/services/kafka_retry.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaTimeoutError, UnknownTopicOrPartitionError
from aiokafka.partitioner import DefaultPartitioner

from streams.services.kafka_retry import Deadline, KafkaUnavailable, Report, ride_through
from streams.services.kafka_topics import metadata

log = logging.getLogger(__name__)
Record = tuple[bytes, bytes]  # (key, value)
STALL_REPORT_S = 5.0
STOP_TIMEOUT_S = 10.0
LINGER_MS = 5  # how long a record sent beside other calls waits for company in its batch
PARTITIONER = DefaultPartitioner()


def log_report(line: str) -> None:
    """The SDK's default progress report: one structured WARNING per line."""
    log.warning("sdk.kafka.retry", extra={"detail": line})


class Delivery:
    def __init__(self, bootstrap: str, deadline_s: float, report: Report = log_report,
                 sleep: Callable[[float], Awaitable[object]] = asyncio.sleep) -> None:
        self.bootstrap, self.deadline_s, self.report, self.sleep = bootstrap, deadline_s, report, sleep
        self._producer: AIOKafkaProducer | None = None
        self._starting = asyncio.Lock()
        self._sending = 0  # calls of this client between their first append and their last acknowledgement
        self._existing: set[str] = set()  # topics seen to exist

    async def deliver(self, topic: str, records: list[Record]) -> None:
        """Return once every record is acknowledged, in order per key; raise past the deadline."""
        deadline = Deadline(self.deadline_s)
        todo = list(range(len(records)))

        async def attempt() -> None:
            nonlocal todo
            producer = await self.producer(deadline)
            if topic not in self._existing:
                await _must_exist(producer, topic)
                self._existing.add(topic)
            todo, error = await self._send(producer, topic, records, todo, deadline)
            if error is not None:
                raise error

        await ride_through(attempt, bootstrap=self.bootstrap, deadline=deadline, report=self.report, sleep=self.sleep)

    async def producer(self, deadline: Deadline | None = None) -> AIOKafkaProducer:
        async with self._starting:
            if self._producer is None:
                self._producer = await ride_through(self._start, bootstrap=self.bootstrap,
                                                    deadline=deadline or Deadline(self.deadline_s),
                                                    report=self.report, sleep=self.sleep)
        return self._producer

    async def close(self) -> None:
        if self._producer is not None:
            producer, self._producer = self._producer, None
            await _stop(producer)

    async def _start(self) -> AIOKafkaProducer:
        producer = AIOKafkaProducer(bootstrap_servers=self.bootstrap, enable_idempotence=True, acks="all",
                                    linger_ms=LINGER_MS, partitioner=PARTITIONER)
        try:
            await producer.start()
        except BaseException:
            await _stop(producer)
            raise
        return producer

    async def _send(self, producer: AIOKafkaProducer, topic: str, records: list[Record], todo: list[int],
                    deadline: Deadline) -> tuple[list[int], BaseException | None]:
        """``(records to produce again, the first error)``; ``([], None)`` once all are acknowledged."""
        acks = _Acks()
        unsent: list[int] = []
        refused: list[BaseException] = []
        alone = self._sending == 0
        self._sending += 1

        async def append() -> None:
            try:
                if alone:
                    await _append_closed(producer, topic, records, todo, acks, unsent, refused)
                else:
                    await _append_open(producer, topic, records, todo, acks, unsent, refused)
            finally:
                acks.changed.set()

        appending = asyncio.ensure_future(append())
        try:
            while not (appending.done() and acks.pending == 0):
                acked_before = acks.acked
                try:
                    await asyncio.wait_for(acks.changed.wait(), STALL_REPORT_S)
                except TimeoutError:
                    self._stalled(acks, len(todo), deadline)
                acks.changed.clear()
                if acks.acked > acked_before:
                    deadline.reset()
        finally:
            self._sending -= 1
            if not appending.done():
                appending.cancel()
        again = sorted(index for index, _ in acks.failed) + unsent
        errors = [error for _, error in sorted(acks.failed, key=lambda f: f[0])] + refused
        return again, (errors[0] if errors else None)

    def _stalled(self, acks: _Acks, total: int, deadline: Deadline) -> None:
        deadline.start(already_s=STALL_REPORT_S)
        left = deadline.remaining()
        if left <= 0:
            raise KafkaUnavailable(self.bootstrap, deadline.waited(), KafkaTimeoutError("no acknowledgement"))
        self.report(f"broker {self.bootstrap} not acknowledging ({acks.acked:,} of {total:,} acknowledged), "
                    f"still trying for {left:.0f} s")


async def _must_exist(producer: AIOKafkaProducer, topic: str) -> None:
    """Raise if ``topic`` does not exist, asking without creating it."""
    if producer.client.cluster.partitions_for_topic(topic):
        return
    (described,) = (await metadata(producer.client, [topic])).to_object()["topics"]
    if described["error_code"] == UnknownTopicOrPartitionError.errno:
        raise UnknownTopicOrPartitionError(f"topic {topic} does not exist: start a worker first (om run), which "
                                           "makes the pipeline's topics, or check OM_TOPIC_PREFIX")


async def _append_open(producer: AIOKafkaProducer, topic: str, records: list[Record], todo: list[int],
                       acks: _Acks, unsent: list[int], refused: list[BaseException]) -> None:
    """Each record through ``send``: it joins the partition's open batch, which lingers for company."""
    for position, index in enumerate(todo):
        key, value = records[index]
        try:
            acks.track(await producer.send(topic, value, key=key), [index])
        except Exception as error:  # never appended: it and all after it go again, in order
            refused.append(error)
            unsent.extend(todo[position:])
            return


async def _append_closed(producer: AIOKafkaProducer, topic: str, records: list[Record], todo: list[int],
                         acks: _Acks, unsent: list[int], refused: list[BaseException]) -> None:
    """The records in closed batches, a run per partition in the records' order, sent without lingering."""
    try:
        partitions = sorted(await producer.partitions_for(topic))
    except Exception as error:
        refused.append(error)
        unsent.extend(todo)
        return
    batches = _closed_batches(producer, records, todo, partitions)
    for position, (partition, batch, indices) in enumerate(batches):
        try:
            acks.track(await producer.send_batch(batch, topic, partition=partition), indices)
        except Exception as error:  # never queued: its records and every later batch's go again
            refused.append(error)
            unsent.extend(sorted(index for _, _, later in batches[position:] for index in later))
            return


def _closed_batches(producer: AIOKafkaProducer, records: list[Record], todo: list[int],
                    partitions: list[int]) -> list[tuple[int, object, list[int]]]:
    """``(partition, closed batch, record indices)`` in the order they are to be queued."""
    open_batches: dict[int, tuple[object, list[int]]] = {}
    done: list[tuple[int, object, list[int]]] = []
    for index in todo:
        key, value = records[index]
        partition = PARTITIONER(key, partitions, partitions)
        batch, indices = open_batches.get(partition) or (None, [])
        if batch is None or batch.append(timestamp=None, key=key, value=value) is None:
            if batch is not None:
                batch.close()
                done.append((partition, batch, indices))
            batch, indices = producer.create_batch(), []
            batch.append(timestamp=None, key=key, value=value)  # a fresh batch takes any one record
            open_batches[partition] = (batch, indices)
        indices.append(index)
    for partition, (batch, indices) in open_batches.items():
        batch.close()
        done.append((partition, batch, indices))
    return done


class _Acks:
    """Counts acknowledgements as they come (callbacks, so thousands of records cost no polling)."""

    def __init__(self) -> None:
        self.pending = self.acked = 0
        self.failed: list[tuple[int, BaseException]] = []
        self.changed = asyncio.Event()

    def track(self, future: asyncio.Future, indices: list[int]) -> None:
        """``future`` acknowledges (or fails) the records at ``indices`` together."""
        self.pending += 1
        future.add_done_callback(lambda done: self._done(done, indices))

    def _done(self, future: asyncio.Future, indices: list[int]) -> None:
        self.pending -= 1
        error = asyncio.CancelledError() if future.cancelled() else future.exception()
        if error is None:
            self.acked += len(indices)
        else:
            self.failed.extend((index, error) for index in indices)
        self.changed.set()


async def _stop(producer: AIOKafkaProducer) -> None:
    """Stop within a bound: a producer still holding batches for a dead broker would wait forever."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(producer.stop(), STOP_TIMEOUT_S)
