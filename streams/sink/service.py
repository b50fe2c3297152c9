"""The ClickHouse sink: messages, records and events topics -> tables (and the results topic -> the
cost ledger, ``SinkOptions.ledger``), in batches, at least once.

Guarantees:

* **Nothing lost.** Offsets are committed only after ClickHouse accepted the whole batch. A crash
  between insert and commit redelivers the batch; the tables absorb the repeat (every row replaces
  itself by version, see :mod:`streams.sink.rows`), so at-least-once delivery ends exactly-once in
  the tables.
* **ClickHouse down is a pause, not a failure.** The batch is retried with exponential backoff
  until it lands; meanwhile the partitions are paused and the consumer keeps polling, so it stays
  in its group however long the outage lasts.
* **Only what the processor accepts is stored.** A chat message it refuses by its record alone
  (undecodable, invalid, keyed to another lookup key) is skipped here, counted, and not
  dead-lettered a second time: the processor dead-letters it once. What it refuses later (for the
  key's state) it hides with a refusal delta (:mod:`streams.sink.rows`).
* **Budgets are told, and confirmed.** With ``daily_token_budget``, the ledger rows of a batch are
  summed per resource after the insert, and the resulting ``budget`` control events are confirmed by
  the broker before the batch is committed (:mod:`streams.sink.budget`).
* **In order, one write at a time; the next batch starts early.** Batches are written and committed
  in log order, one at a time. While one is written, the next is collected and started: its
  shortcut rows are computed and announced to the embedded reader
  (:func:`streams.sink.writer.prepare_batch`), so a read-your-writes wait never queues behind the
  inserts of the batch before. A failed write is retried only while nothing is being collected.
* **Writes gather where nobody waits for them** (``gather_ms``, the embedded worker's). Its reader
  is handed a started batch's rows before their insert, so the insert can wait: the started batches
  are written together once the oldest has waited ``gather_ms``, fewer and larger parts for the
  same rows (chDB writes a part per table per insert: the largest CPU cost of a waiting agent's
  turn). Reads of the tables themselves wait for them, and a read that waits ends the gather
  (:mod:`streams.sink.landings`). A batch with
  a key whose row needs a recompute after the inserts (what a wait on it waits for), or one that
  was not started, is written at once with everything before it.
* **Poison never stalls.** A record of the pipeline's own topics that cannot be decoded goes to the
  dead-letter topic with the reason; a record ClickHouse refuses while ClickHouse is otherwise healthy is isolated by writing
  the batch record by record, and dead-lettered too. Its offset is then committed like any other.
* **Embeddable.** :meth:`Sink.start` runs the loop as a task on the caller's event loop (the
  embedded worker hosts it next to the chDB engine); ``om sink`` runs it alone for server DSNs.
  A loop that ends with an error is reported (``on_failure``, :meth:`wait`), never left idle in
  the group.
  ClickHouse calls run in a thread (the chDB client is synchronous and serialises its calls).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.errors import CommitFailedError, IllegalStateError
from aiokafka.structs import ConsumerRecord, TopicPartition
from clickhouse_connect.driver.client import Client

from schemas.control import BudgetChange
from schemas.dlq import DeadLetter
from streams.group_predecessor import MemberListener, MemberSlot, claim_slot, leave_for_predecessor
from streams.metrics import SINK_FLUSH_SECONDS
from streams.services.kafka_health import start_when_reachable
from streams.sink.budget import BudgetWatch, ledger_resources
from streams.sink.conversion import Converter, refusal_stage
from streams.sink.flights import Failed, Flight, gather_left, group_start, next_group
from streams.sink.group import Revocations, report_failure
from streams.sink.indexing import snapshot_of
from streams.sink.landings import Landings
from streams.sink.options import SinkOptions, SinkStats
from streams.sink.outage import clickhouse_healthy, paused_wait
from streams.sink.contexts import Announce
from streams.sink.batches import Converted, collect
from streams.sink.row_cache import RowCache
from streams.sink.rows import Rows
from streams.sink.writer import InFlight, prepare_batch, write_batch
from streams.stored_messages import NotMaterialised
from streams.topics import Topics

log = logging.getLogger(__name__)


class Sink:
    def __init__(self, client: Client, bootstrap: str, topics: Topics, options: SinkOptions | None = None) -> None:
        self.client = client
        self.bootstrap = bootstrap
        self.topics = topics
        self.options = options or SinkOptions()
        self.stats = SinkStats()
        self.rows_cache = RowCache()  # the context rows it wrote last (streams/sink/row_cache.py)
        self._convert = Converter(topics, self.options)  # a record's rows, or why it is refused
        self._budget = BudgetWatch(self.options.daily_token_budget, self.options.clock, self.options.budget_sweep_s) \
            if self.options.daily_token_budget else None
        self._next_sweep = 0.0
        self._consumer: AIOKafkaConsumer | None = None
        self._producer: AIOKafkaProducer | None = None
        self._task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()
        self._slot: MemberSlot | None = None
        self._queue: list[Flight] = []  # started batches, in order, until committed (the first ones being written)
        self._writer: asyncio.Task[Failed | None] | None = None  # writes the queue (_drain)
        self._queued = asyncio.Event()  # a batch was queued (a gathering writer looks again)
        # reads of the tables wait for what was collected, and end the gather (streams/sink/landings.py)
        self.landings = Landings(hurry=self._queued.set)

    async def start(self, on_failure: Callable[[BaseException], None] | None = None) -> None:
        """Join the group and run the loop as a task on the running event loop.

        ``on_failure`` hears of an error that ends the loop: a host that embeds the sink must then
        restart or stop, since the consumer would otherwise stay in its group with its partitions
        frozen (``om sink`` learns it from :meth:`wait`)."""
        opts = self.options
        self._producer, self._consumer = await start_when_reachable(self._connect, self.bootstrap, "sink")
        self._task = asyncio.create_task(self._run(), name="om-sink")
        self._task.add_done_callback(functools.partial(report_failure, on_failure))
        log.info("sink.started", extra={"group": opts.group_id, "topics": self._convert.topics})

    async def _connect(self) -> tuple[AIOKafkaProducer, AIOKafkaConsumer]:
        producer = AIOKafkaProducer(bootstrap_servers=self.bootstrap, enable_idempotence=True)
        consumer = AIOKafkaConsumer(
            bootstrap_servers=self.bootstrap, group_id=self.options.group_id,
            enable_auto_commit=False, auto_offset_reset="earliest",
            isolation_level="read_committed",  # aborted processor transactions never reach tables
            **self.options.consumer,
        )
        slot = self._member_slot()
        consumer.subscribe(self._convert.topics, listener=Revocations(
            self.rows_cache, None if slot is None else MemberListener(slot, consumer)))
        if slot is not None:  # a predecessor killed -9 leaves now, not a session later
            await leave_for_predecessor(self.bootstrap, slot)
        try:
            await producer.start()
            await consumer.start()
        except BaseException:
            await consumer.stop()
            await producer.stop()
            raise
        # the topics it sends to, named now: a client that tracks none asks for every topic in the
        # cluster at each periodic refresh (streams/services/kafka_topics.py), and this one may send
        # nothing for days
        producer.client.set_topics([self.topics.control, self.topics.dlq])
        return producer, consumer

    def _member_slot(self) -> MemberSlot | None:
        if self._slot is None and self.options.members is not None:
            self._slot = claim_slot(self.options.members, self.options.group_id)
        return self._slot

    async def stop(self) -> None:
        """Finish the batch in hand (if ClickHouse takes it), then leave the group."""
        self._stopping.set()
        if self._task is not None:
            await self._task
        if self._consumer is not None:
            await self._consumer.stop()
        if self._producer is not None:
            await self._producer.stop()
        log.info("sink.stopped", extra={"batches": self.stats.batches, "rows": self.stats.rows})

    async def wait(self) -> None:
        """Until the loop ends (after :meth:`stop`, or with the error that ended it)."""
        assert self._task is not None, "start() first"
        await self._task

    async def lag(self) -> int:
        """Records on the assigned partitions not yet committed by this sink."""
        consumer = self._require_consumer()
        assigned = list(consumer.assignment())
        if not assigned:
            return -1
        ends = await consumer.end_offsets(assigned)
        total = 0
        for tp in assigned:
            committed = await consumer.committed(tp)
            total += ends[tp] - (committed or 0)
        return total

    def _require_consumer(self) -> AIOKafkaConsumer:
        assert self._consumer is not None, "start() first"
        return self._consumer

    async def _run(self) -> None:
        """Collect batches while the ones before are written; start each at once (its shortcuts' rows
        announced, :func:`~streams.sink.writer.prepare_batch`, counting every batch not yet landed);
        write the started ones in order, as one write each time the write before ends."""
        try:
            while not self._stopping.is_set():
                if self._budget is not None and time.monotonic() >= self._next_sweep:
                    await self._budget_notices(self._budget.sweep)
                    self._next_sweep = time.monotonic() + self._budget.sweep_s
                batch = await self._collect()
                await self._after_writes()
                if batch:
                    self.landings.collected()
                    self._queue.append(await self._prepared(batch))
                    self._write_queue()
            self._queued.set()  # stopping: nothing gathers any longer
            while self._writer is not None:
                await asyncio.wait({self._writer})
                await self._after_writes()
        finally:
            self.landings.release()
            if self._writer is not None and not self._writer.done():
                self._writer.cancel()  # the loop failed: no commit after it

    async def _collect(self) -> list[Converted]:
        """The next batch, each record converted (:func:`streams.sink.batches.collect`)."""
        opts = self.options
        return await collect(self._require_consumer(), self._convert, self.topics, self._stopping,
                             max_batch=opts.max_batch, max_wait_ms=opts.max_wait_ms, linger_ms=opts.linger_ms)

    async def _prepared(self, batch: list[Converted]) -> Flight:
        """``batch``'s refused records dead-lettered, and its start: the shortcuts' rows computed and
        announced, counting the batches queued before it (being written, or waiting) as stored. A
        batch behind one that cannot have a batch started behind it (a deletion) starts in its write."""
        started = time.monotonic()
        converted: list[tuple[ConsumerRecord, Rows]] = []
        for record, outcome in batch:
            if isinstance(outcome, Rows):
                converted.append((record, outcome))
            elif isinstance(outcome, NotMaterialised):
                self.stats.not_materialised += 1
            else:
                await self._dead_letter(record, outcome, refusal_stage(outcome))
        in_flight = InFlight.of([flight.prepared for flight in self._queue])
        prepared = None
        if not self._queue or in_flight is not None:
            prepared = await asyncio.to_thread(prepare_batch, self.options.starts or self.client,
                                               [rows for _, rows in converted],
                                               _timed(self.options.landing, started), self.options.stored,
                                               self.rows_cache, in_flight)
        return Flight([record for record, _ in batch], converted, prepared, started)

    def _write_queue(self) -> None:
        """Write the queued batches unless a write is under way, or one failed (:meth:`_after_writes`)."""
        if self._writer is not None and self._writer.done() and self._writer.result() is None:
            self._writer = None  # it had written everything queued then
        if self._writer is None and self._queue:
            self._writer = asyncio.create_task(self._drain(), name="om-sink-write")
        self._queued.set()  # a gathering writer looks at the queue again

    async def _drain(self) -> Failed | None:
        """Write and commit the queued batches in order, the started ones at the head as one write;
        stop at a write that fails (its retries, which wait with the partitions paused, are
        :meth:`_after_writes`'s, when nothing is collected)."""
        while self._queue:
            if (gather_s := 0.0 if self._stopping.is_set() or self.landings.awaited else
                    gather_left(self._queue, self.options.gather_ms, time.monotonic())) > 0:
                self._queued.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._queued.wait(), gather_s)
                continue
            group = next_group(self._queue)
            try:
                self.stats.rows += await asyncio.to_thread(
                    write_batch, self.client, [rows for f in group for _, rows in f.converted], self.options.announce,
                    self.options.stored, self.rows_cache, self.options.withdraw,
                    _timed(self.options.landing, group[0].started), group_start(group))
            except Exception as error:  # noqa: BLE001 - any ClickHouse failure is retried or isolated
                return Failed(group, error)
            await self._written(group)
            del self._queue[:len(group)]
        return None

    async def _after_writes(self) -> None:
        """Once the writes under way ended: a failed one retried until it lands, and the rest of
        the queue written."""
        if self._writer is None or not self._writer.done():
            return
        failed, self._writer = self._writer.result(), None
        if failed is not None:
            await self._write([c for flight in failed.group for c in flight.converted], failed.error)
            await self._written(failed.group)
            del self._queue[:len(failed.group)]
        self._write_queue()

    async def _written(self, group: list[Flight]) -> None:
        """What follows the write of ``group``'s batches: the budget's notices, recall's index, the
        commit; ``om_sink_flush_seconds`` times each phase from each batch's start (the time to the
        announce is what a read-your-writes wait waits for, the rest how far the writes lag)."""
        self.landings.written(len(group))
        for flight in group:
            SINK_FLUSH_SECONDS.labels(phase="written").observe(time.monotonic() - flight.started)
        records = [record for flight in group for record in flight.records]
        if self._budget is not None:
            resources = ledger_resources(row for flight in group for record, rows in flight.converted
                                         if record.topic == self.topics.results
                                         for row in rows.rows.get("om_model_calls", ()))
            if resources:
                await self._budget_notices(lambda client: self._budget.after_batch(client, resources))
        if self.options.indexer is not None:
            await self._index([r for r in records if r.topic == self.topics.records])
        await self._commit(records)
        for flight in group:
            SINK_FLUSH_SECONDS.labels(phase="committed").observe(time.monotonic() - flight.started)
        self.stats.batches += len(group)

    async def _write(self, converted: list[tuple[ConsumerRecord, Rows]], failed: Exception | None = None) -> None:
        """Write ``converted`` until ClickHouse takes it (``failed``: the error of a first attempt)."""
        delay = self.options.retry_initial_s
        error = failed
        while True:
            if error is None:
                try:
                    self.stats.rows += await asyncio.to_thread(
                        write_batch, self.client, [rows for _, rows in converted], self.options.announce,
                        self.options.stored, self.rows_cache, self.options.withdraw, self.options.landing)
                    return
                except Exception as refused:  # noqa: BLE001 - any ClickHouse failure is retried or isolated
                    error = refused
            if await clickhouse_healthy(self.client) and len(converted) > 0:
                await self._write_one_by_one(converted)
                return
            self.stats.retries += 1
            log.warning("sink.clickhouse.unavailable", extra={"error": type(error).__name__, "retry_in_s": delay})
            await paused_wait(self._require_consumer(), delay)
            delay = min(delay * 2, self.options.retry_max_s)
            error = None

    async def _budget_notices(self, decide: Callable[[Client], list[BudgetChange]]) -> None:
        """Send what the budget watch decides, each send confirmed; a ledger that cannot be read
        defers the decision (to the next batch of the resource, or the next sweep)."""
        try:
            notices = await asyncio.to_thread(decide, self.client)
        except Exception as error:  # noqa: BLE001 - the tables stay right; only the notice waits
            log.warning("sink.budget.unreadable", extra={"error": type(error).__name__})
            return
        if not notices:
            return
        assert self._producer is not None
        sent = [await self._producer.send(self.topics.control, n.to_bytes(), key=n.key.encode()) for n in notices]
        await asyncio.gather(*sent)
        exceeded = sum(n.exceeded for n in notices)
        log.info("sink.budget.notices", extra={"exceeded": exceeded, "allowed": len(notices) - exceeded})

    async def _index(self, records: list[ConsumerRecord]) -> None:
        """Embed new observation groups; a failure is logged, never blocks materialisation."""
        snapshots = [d for d in (snapshot_of(r.value) for r in records) if d is not None]
        if not snapshots:
            return
        try:
            await asyncio.to_thread(self.options.indexer, self.client, snapshots)  # type: ignore[arg-type]
        except Exception as error:  # noqa: BLE001 - search is best effort; tables stay correct
            log.warning("sink.index.failed", extra={"error": type(error).__name__})

    async def _write_one_by_one(self, converted: list[tuple[ConsumerRecord, Rows]]) -> None:
        """ClickHouse is up but refused the batch: find the records it refuses, dead-letter them."""
        for record, rows in converted:
            try:
                self.stats.rows += await asyncio.to_thread(write_batch, self.client, [rows], self.options.announce,
                                                           self.options.stored, self.rows_cache, self.options.withdraw,
                                                           self.options.landing)
            except Exception as error:  # noqa: BLE001 - decided by the health probe below
                if not await clickhouse_healthy(self.client):
                    raise
                await self._dead_letter(record, error, "apply")

    async def _commit(self, batch: list[ConsumerRecord]) -> None:
        offsets: dict[TopicPartition, int] = {}
        for record in batch:
            tp = TopicPartition(record.topic, record.partition)
            offsets[tp] = max(offsets.get(tp, 0), record.offset + 1)
        try:
            await self._require_consumer().commit(offsets)
        except (CommitFailedError, IllegalStateError):
            # The group rebalanced while the batch was written (aiokafka says CommitFailed, or
            # IllegalState when the partitions are no longer assigned): the new owner re-reads the
            # batch, and the tables absorb the repeat. Not a crash: restarting the worker for it would
            # only start another rebalance.
            log.warning("sink.commit.failed_after_rebalance", extra={"partitions": len(offsets)})

    async def _dead_letter(self, record: ConsumerRecord, error: BaseException, stage: str) -> None:
        letter = DeadLetter.from_failure(
            topic=record.topic, partition=record.partition, offset=record.offset, key=record.key,
            value=record.value, error=error, stage=stage, failed_at=int(time.time() * 1000),  # type: ignore[arg-type]
        )
        assert self._producer is not None
        await self._producer.send_and_wait(self.topics.dlq, letter.to_bytes(), key=letter.key)
        self.stats.dead_letters += 1
        log.warning("sink.dead_letter", extra={"topic": record.topic, "partition": record.partition,
                                               "offset": record.offset, "stage": stage, "field": letter.field})


def _timed(announce: Announce | None, started: float) -> Announce | None:
    """``announce`` (the landing rows'), noting in ``om_sink_flush_seconds`` when a flush first calls it."""
    if announce is None:
        return None
    first = [True]

    def timed(rows: Sequence[Sequence[Any]]) -> None:
        if first:
            first.clear()
            SINK_FLUSH_SECONDS.labels(phase="announce").observe(time.monotonic() - started)
        announce(rows)
    return timed
