"""Sending inside the transaction that will commit an input record's offset, and confirming it.

Faust's exactly-once mode keeps one Kafka transaction per (topic group, partition) and commits the
input offsets of that partition in it. Its own send path picks the transaction from the *output*
topic's metadata as the consumer sees it — and the consumer only knows topics it subscribes to, so
a send to ``events`` or ``records`` silently leaves the transaction (seen here: a kill -9 then
replays inputs whose effects were already visible). An :class:`Outbox` sends each record under the
transactional id of the *input* record's group and partition, so effects, state changelog and
offsets of a batch commit together.

Records go straight into the transaction's aiokafka producer as record batches, one per output
partition (more only past the producer's batch size), not one by one through Faust's send: that
took a lock, a signal, a settings lookup and an accumulator future per record (issue 20 item 1).
Each record batch joins the transaction like a single send does (aiokafka adds its partition to the
transaction as the batch is queued). The Faust details this relies on, checked by the kill -9
integration test: ``app.assignor.group_for_topic``, and the producer's ``_transaction_producers``
and ``_trn_locks`` keyed by transactional id (its lock is held while queueing, as Faust's send does).

A send only *schedules* records. Every record batch of a processor batch is confirmed
(:meth:`Outbox.confirm`) before that batch is acknowledged, and one the broker refused aborts it:
aiokafka would otherwise commit the transaction around the missing records (issue 18: a dropped
job, a cycle in flight forever, and the partition's later records lost to a broken idempotent
sequence).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import Any

import faust
from faust.exceptions import ProducerSendError


class DeliveryFailed(RuntimeError):
    """A record of the open transaction was not accepted; the transaction must not commit."""


class Outbox:
    """The records one batch sends, each in its input partition's transaction."""

    def __init__(self, app: faust.App) -> None:
        self._app, self._app_id = app, app.conf.id  # read once: a Faust setting costs ~3 µs a read
        self._ids: dict[tuple[str, int], str] = {}  # (source topic, partition) -> transactional id
        self._producers: dict[str, Any] = {}  # transactional id -> its aiokafka producer
        self._batches: dict[tuple[str, str, int], list[Any]] = {}  # (transactional id, topic, partition)

    def add(self, source_topic: str, partition: int, topic: str, key: bytes | None, value: bytes | None) -> None:
        """Queue one record for ``topic``'s ``partition`` in the transaction of ``source_topic``'s."""
        transactional_id = self._ids.get((source_topic, partition))
        if transactional_id is None:
            group = self._app.assignor.group_for_topic(source_topic)
            transactional_id = self._ids[(source_topic, partition)] = f"{self._app_id}-{group}-{partition}"
        batches = self._batches.get((transactional_id, topic, partition))
        if batches is None:
            batches = self._batches[(transactional_id, topic, partition)] = [self._batch(transactional_id)]
        if batches[-1].append(key=key, value=value, timestamp=None) is None:  # full: a record always fits an empty one
            batches.append(self._batch(transactional_id))
            batches[-1].append(key=key, value=value, timestamp=None)

    async def confirm(self) -> dict[tuple[str, str, int], int]:
        """Send what was added, and wait until the broker accepted all of it (see :func:`confirm`).
        Returns the offset of the last record sent per (transactional id, topic, partition)."""
        locks = self._app.producer._trn_locks
        deliveries, sent = [], []
        for (transactional_id, topic, partition), batches in self._batches.items():
            producer = self._producers[transactional_id]
            async with locks[transactional_id]:
                for batch in batches:
                    batch.close()
                    deliveries.append(await producer.send_batch(batch, topic, partition=partition))
                    sent.append(((transactional_id, topic, partition), batch.record_count()))
        self._batches.clear()
        last: dict[tuple[str, str, int], int] = {}
        for (where, count), metadata in zip(sent, await confirm(deliveries), strict=True):
            last[where] = max(last.get(where, -1), metadata.offset + count - 1)
        return last

    def _batch(self, transactional_id: str) -> Any:
        producer = self._producers.get(transactional_id)
        if producer is None:
            producer = self._app.producer._transaction_producers.get(transactional_id)
            if producer is None:  # what Faust's send raises: the partition's transaction is not open
                raise ProducerSendError(f"No transaction producer found for : {transactional_id}")
            self._producers[transactional_id] = producer
        return producer.create_batch()


async def confirm(deliveries: Iterable[Awaitable[Any]]) -> list[Any]:
    """Wait for the broker's acknowledgement of every delivery, and return them (their record
    metadata, in order); any refusal raises :class:`DeliveryFailed`."""
    outcomes = await asyncio.gather(*deliveries, return_exceptions=True)
    failed = [o for o in outcomes if isinstance(o, BaseException)]
    if failed:
        raise DeliveryFailed(f"{len(failed)} of {len(outcomes)} records not accepted: "
                             f"{sorted({type(f).__name__ for f in failed})}")
    return outcomes
