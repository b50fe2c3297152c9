"""Sending inside the transaction that will commit an input record's offset.

Faust's exactly-once mode keeps one Kafka transaction per (topic group, partition) and commits the
input offsets of that partition in it. Its own send path picks the transaction from the *output*
topic's metadata as the consumer sees it — and the consumer only knows topics it subscribes to, so
a send to ``events`` or ``records`` silently leaves the transaction (seen here: a kill -9 then
replays inputs whose effects were already visible). This sends each record under the transactional
id of the *input* record's group and partition, so effects, state changelog and offsets of a batch
commit together. It relies on two Faust details, checked by the kill -9 integration test:
``app.assignor.group_for_topic`` and the ``transactional_id`` argument of ``app.producer.send``.
"""

from __future__ import annotations

from typing import Any
from weakref import WeakSet

import faust


async def send_with_input(app: faust.App, source_topic: str, partition: int, topic: str,
                          key: bytes | None, value: bytes | None) -> None:
    group = app.assignor.group_for_topic(source_topic)
    transactional_id = f"{app.conf.id}-{group}-{partition}"
    await app.producer.send(topic, key, value, partition, None, None, transactional_id=transactional_id)


async def abort_dangling(app: faust.App, topics: list[str], partitions: int, done: WeakSet[Any]) -> None:
    """Abort whatever an earlier incarnation of each of our transactional ids left in our partitions.

    A broker shutting down can take a transactional batch and forget its transaction (seen with the
    single local broker: after the restart the coordinator's log ends at the previous commit). Those
    records hang, the last stable offset stops there, and the next commit marker of the same
    producer id would commit them along with its own records, duplicating their effects. A marker
    ends a producer's open transaction on a partition whatever it holds; so an *abort* marker on each
    partition we may write, before any batch of ours, turns the dangling records into aborted ones.
    Each transaction sends one empty record per topic and aborts it.

    Only producers not yet in ``done``: Faust creates a producer (and begins its transaction) for
    each newly assigned partition, and nothing of ours is in it yet. A producer kept across a
    rebalance may hold acknowledged but uncommitted batches, which an abort would lose (seen: a
    result dropped, its thread waiting forever). Relies on Faust's ``_transaction_producers`` (one
    aiokafka producer per transactional id, in a transaction); run under the commit fence so that
    no batch or commit interleaves.
    """
    producers: dict[str, Any] = app.producer._transaction_producers  # type: ignore[attr-defined]
    for transactional_id, producer in list(producers.items()):
        partition = int(transactional_id.rsplit("-", 1)[1])
        if producer in done or partition >= partitions:
            continue
        done.add(producer)
        for topic in topics:
            await producer.send(topic, b"", key=b"", partition=partition)
        await producer.abort_transaction()
        await producer.begin_transaction()
