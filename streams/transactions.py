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

import faust


async def send_with_input(app: faust.App, source_topic: str, partition: int, topic: str,
                          key: bytes | None, value: bytes | None) -> None:
    group = app.assignor.group_for_topic(source_topic)
    transactional_id = f"{app.conf.id}-{group}-{partition}"
    await app.producer.send(topic, key, value, partition, None, None, transactional_id=transactional_id)
