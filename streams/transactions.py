"""Sending inside the transaction that will commit an input record's offset, and confirming it.

Faust's exactly-once mode keeps one Kafka transaction per (topic group, partition) and commits the
input offsets of that partition in it. Its own send path picks the transaction from the *output*
topic's metadata as the consumer sees it — and the consumer only knows topics it subscribes to, so
a send to ``events`` or ``records`` silently leaves the transaction (seen here: a kill -9 then
replays inputs whose effects were already visible). This sends each record under the transactional
id of the *input* record's group and partition, so effects, state changelog and offsets of a batch
commit together. It relies on two Faust details, checked by the kill -9 integration test:
``app.assignor.group_for_topic`` and the ``transactional_id`` argument of ``app.producer.send``.

A send only *schedules* a record. Every send of a batch is confirmed (:func:`confirm`) before the
batch is acknowledged, and a send the broker refused aborts the batch: aiokafka would otherwise
commit the transaction around the missing record (issue 18: a dropped job, a cycle in flight
forever, and the partition's later records lost to a broken idempotent sequence).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import Any

import faust


class DeliveryFailed(RuntimeError):
    """A record of the open transaction was not accepted; the transaction must not commit."""


async def send_with_input(app: faust.App, source_topic: str, partition: int, topic: str,
                          key: bytes | None, value: bytes | None) -> Awaitable[Any]:
    """Schedule one record in the input partition's transaction; returns its delivery."""
    group = app.assignor.group_for_topic(source_topic)
    transactional_id = f"{app.conf.id}-{group}-{partition}"
    return await app.producer.send(topic, key, value, partition, None, None, transactional_id=transactional_id)


async def confirm(deliveries: Iterable[Awaitable[Any]]) -> None:
    """Wait for the broker's acknowledgement of every delivery; any refusal raises :class:`DeliveryFailed`."""
    outcomes = await asyncio.gather(*deliveries, return_exceptions=True)
    failed = [o for o in outcomes if isinstance(o, BaseException)]
    if failed:
        raise DeliveryFailed(f"{len(failed)} of {len(outcomes)} records not accepted: "
                             f"{sorted({type(f).__name__ for f in failed})}")
