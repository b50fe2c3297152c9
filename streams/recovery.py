"""Faust table recovery that ends when the changelog's last committed record is applied.

Faust (faust-streaming 0.15.3, ``faust/tables/recovery.py``) counts a changelog partition as
recovered once the record at ``end offset - 1`` is applied. Under ``exactly_once`` that offset
is a transaction marker, which no consumer ever receives, so recovery ends only by a fallback:
two 5-second empty polls of the changelog queue (``_slurp_changelogs``, hard-coded), then
"positions past the end" — ten seconds after every start or rebalance that assigns state, with
nothing processed meanwhile.

The patch: :meth:`PromptRecovery._build_highwaters` puts the offset of the last committed
*record* where Faust puts ``end - 1`` (found by :mod:`streams.changelog_tail` with a
read_committed consumer of its own, once no transaction is open on the partition: a previous
owner's last transaction settled, committed or fenced), so Faust's own rule ("applied up to the highwater") ends
recovery the moment that record is applied. Should the tail read fail, Faust's own highwater is
used and its ten-second fallback still ends recovery.

The highwaters are assigned, where Faust's ``_build_highwaters`` does ``Counter.update``, which
*adds* the new highwater to the last one of a partition kept through a rebalance (seen here:
recovery waited for offset 213 of a partition whose committed records end at 108, for ever).

A partition that comes back is read from the changelog's start. Faust forgets where it had read a
partition when the partition is revoked — except when ``Recovery.on_rebalance`` returns early
because a newer generation began meanwhile (a busy machine, members joining one by one): then the
old read position survives, and a partition that left and returned in between is read only from
there. The processor drops a moved partition's states (``forget_moved`` in streams/app.py), so the
keys written before that position would come back missing, and their next Observer result be
dropped as a result without state (read from Faust's code, not seen: the CI run that showed such a
drop is explained by the aborted-transaction guess below). So every partition newly assigned, by
Faust's own account, forgets its read position here.

Faust's aborted-transaction guess is off while the highwaters are exact. After two 5-second polls
of the changelog queue come back empty — counted since the reader last saw a record, so also while
a new worker only waits to join — ``_slurp_changelogs`` takes a partition whose consumer position
has reached its highwater as recovered, and marks the highwater applied. The guess is for Faust's
own highwaters, on a marker no record reaches; with the last committed record as highwater, the
position reaches it *before* that record is applied, and the record is then skipped as already
seen. Seen in the cluster worker-loss test (``Aborted tx until highwater`` in a joining worker's
log, 0.07 s into its recovery): a thread's only state record never applied, and its next Observer
results dropped as results without state. The guess is the only reader of ``app.consumer.position``;
for a partition recovering to an exact highwater it is answered the offset applied so far, which
never reaches a highwater not yet applied. Faust's fallback highwaters keep the guess.

Faust's changelog reader sets ``signal_recovery_end`` once, on the event that completes
recovery, and clears it at the top of its next iteration; a recovery task not waiting yet by then
would wait forever, since nothing sets it again. Faust's own recovery ended on a 5-second
timeout, long after the task began waiting; ending on an event narrows that margin to the few
loop turns between resuming the changelog and waiting (not seen, but a hang if hit). So here the
signal is a latch: it stays set until the next recovery starts
(:meth:`PromptRecovery._set_recovery_started`), and the reader's clears do nothing. Everything
else is Faust's.

A table whose local store was kept across a clean stop or copied before a crash (the state table:
streams/state_checkpoint.py) adopts it as its active offsets are built: a partition it adopts starts
after the checkpoint's offset (:meth:`PromptRecovery._adopt_kept_stores`), so only the changelog after
it is read; the rest of the store goes.

With exact highwaters, each active partition of a table that can take raw records (the state
table's ``recover_raw``) is first read in bulk up to its highwater by the same read_committed reader
(:mod:`streams.bulk_recovery`, :meth:`PromptRecovery._build_offsets`): Faust's start offset becomes
the last record applied there, so its own one-event-at-a-time reading (5,200 records/s against
~70,000 in bulk, bench 6b) finds nothing left, or only what a deadline or an error left.

:class:`PromptTableManager` is how Faust takes it (``faust.App(TableManager=...)``); it also drops
the fixed one-second sleep Faust's table manager starts with (it lets tables be declared late;
ours are all declared before the app starts).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from faust.tables import TableManager
from faust.tables.recovery import Recovery
from faust.types import TP

from streams.bulk_recovery import read_in_bulk
from streams.changelog_tail import last_committed_offsets

log = logging.getLogger(__name__)

TAIL_DEADLINE_S = 15.0  # past it, Faust's own highwaters (and its ten-second fallback) take over
BULK_DEADLINE_S = 60.0  # within Faust's broker_request_timeout (90 s), which bounds _build_offsets


class _Latch(asyncio.Event):
    """An event only :meth:`reset` clears (``clear`` is the changelog reader's, and ignored)."""

    def clear(self) -> None:
        pass

    def reset(self) -> None:
        super().clear()


class PromptRecovery(Recovery):
    _tail_readers: tuple[AIOKafkaConsumer, AIOKafkaConsumer] | None = None
    _exact = False  # the active highwaters are last committed records (the tail read answered)

    @property
    def signal_recovery_end(self) -> asyncio.Event:
        if self._signal_recovery_end is None:
            self._signal_recovery_end = _Latch()
        return self._signal_recovery_end

    async def on_rebalance(self, assigned: set[TP], revoked: set[TP], newly_assigned: set[TP],
                           generation_id: int = 0) -> None:
        for tp in newly_assigned:  # its states were dropped when it left: read it all again
            self.active_offsets.pop(tp, None)
            self.active_highwaters.pop(tp, None)
        await super().on_rebalance(assigned, revoked, newly_assigned, generation_id)

    def _set_recovery_started(self) -> None:
        super()._set_recovery_started()
        self.signal_recovery_end.reset()  # type: ignore[attr-defined]

    async def _build_highwaters(self, consumer: Any, tps: set[TP], destination: Any, title: str) -> None:
        if not tps:
            return
        try:
            committed, uncommitted = await self._readers()
            found = await last_committed_offsets(committed, {TopicPartition(tp.topic, tp.partition) for tp in tps},
                                                 deadline_s=TAIL_DEADLINE_S, uncommitted=uncommitted)
        except Exception as error:  # noqa: BLE001 — Faust's own highwaters and fallback still recover
            log.warning("om.recovery.tail_read_failed", extra={"error": repr(error), "action": "Faust's highwaters"})
            self._exact = False
            await super()._build_highwaters(consumer, tps, destination, title)
            return
        self._exact = True
        self._answer_the_guess_with_applied_offsets()
        highwaters = {TP(tp.topic, tp.partition): offset for tp, offset in found.items()}
        self.log.info("Last committed record of %s changelog partitions:\n%s", title,
                      self._highwater_logtable(highwaters, title=title))
        for tp, offset in highwaters.items():  # not Counter.update: it adds to a kept partition's old highwater
            destination[tp] = offset

    async def _build_offsets(self, consumer: Any, tps: set[TP], destination: Any, title: str) -> None:
        await super()._build_offsets(consumer, tps, destination, title)
        if title != "active":
            return
        bulk = {TopicPartition(tp.topic, tp.partition): tp for tp in tps
                if hasattr(self.tp_to_table.get(tp), "recover_raw")}
        self._adopt_kept_stores(bulk.values(), destination)
        if not bulk or not self._exact:
            return
        started = time.monotonic()
        applied: dict[TopicPartition, int] = {}

        def apply(tp: TopicPartition, offset: int, key: bytes | None, value: bytes | None) -> None:
            self.tp_to_table[bulk[tp]].recover_raw(tp.partition, offset, key, value)

        starts = {k: destination[tp] for k, tp in bulk.items()}
        try:
            committed, _ = await self._readers()
            applied = await read_in_bulk(committed, starts, {k: self.active_highwaters[tp] for k, tp in bulk.items()},
                                         apply, deadline_s=BULK_DEADLINE_S)
        except Exception as error:  # noqa: BLE001 — Faust reads what was not applied here
            log.warning("om.recovery.bulk_read_failed", extra={"error": repr(error), "action": "Faust's recovery"})
        records = 0
        for k, tp in bulk.items():
            offset = applied.get(k, starts[k])
            records += offset - starts[k]
            destination[tp] = offset  # Faust starts after it
        log.info("om.recovery.bulk_read", extra={"partitions": len(bulk), "offsets": records,
                                                 "seconds": round(time.monotonic() - started, 3)})

    def _adopt_kept_stores(self, tps: Any, destination: Any) -> None:
        """A table whose store was kept or copied (streams/state_checkpoint.py) starts each partition
        it adopts after the checkpoint's offset, not at the changelog's start. Every such table is
        asked, at its first assignment even with no partition of it: the rest of a kept store goes."""
        by_table: dict[Any, list[TP]] = {table: [] for table in self.tables._changelogs.values()
                                         if hasattr(table, "recover_raw")}
        for tp in tps:
            by_table.setdefault(self.tp_to_table[tp], []).append(tp)
        for table, table_tps in by_table.items():
            bounds = {tp.partition: (destination[tp], self.active_highwaters.get(tp, -1)) for tp in table_tps}
            taken = table.local.adopt(bounds)
            for tp in table_tps:
                if tp.partition in taken:
                    destination[tp] = taken[tp.partition]

    def _answer_the_guess_with_applied_offsets(self) -> None:
        consumer = self.app.consumer
        if getattr(consumer, "_om_recovery_position", False):
            return
        fetched = consumer.position

        async def position(tp: TP) -> int | None:
            if self._exact and tp in self.active_highwaters:
                return self.active_offsets.get(tp)
            return await fetched(tp)

        consumer.position = position
        consumer._om_recovery_position = True

    async def _readers(self) -> tuple[AIOKafkaConsumer, AIOKafkaConsumer]:
        """A read_committed reader for the tail, a read_uncommitted one for the high watermarks."""
        if self._tail_readers is None:
            servers = [f"{url.host}:{url.port or 9092}" for url in self.app.conf.broker]
            readers = tuple(AIOKafkaConsumer(bootstrap_servers=servers, group_id=None, enable_auto_commit=False,
                                             isolation_level=level, fetch_max_wait_ms=50,
                                             max_partition_fetch_bytes=8 * 2**20,  # the bulk read's
                                             client_id=f"{self.app.conf.id}-changelog-tail")
                            for level in ("read_committed", "read_uncommitted"))
            for reader in readers:
                await reader.start()
            self._tail_readers = readers  # type: ignore[assignment]
        return self._tail_readers  # type: ignore[return-value]

    async def on_stop(self) -> None:
        await super().on_stop()
        if self._tail_readers is not None:
            for reader in self._tail_readers:
                await reader.stop()
            self._tail_readers = None


class PromptTableManager(TableManager):
    @property
    def recovery(self) -> Recovery:
        if self._recovery is None:
            self._recovery = PromptRecovery(self.app, self, beacon=self.beacon, loop=self.loop)
        return self._recovery

    async def on_start(self) -> None:
        if not self.should_stop:
            await self._update_channels()
            await self.recovery.start()
