"""After recovery, every input partition is read again from its committed offset — or from its
start when it has none.

Faust (faust-streaming 0.15.3, ``Recovery._resume_streams``) resumes the input partitions, then
seeks them to their committed offsets: the seek is what makes a partition's records, fetched
around a rebalance and not all processed, be read again. But aiokafka's ``seek_to_committed``
seeks only partitions whose committed offset is above 0, so a partition never committed (a new
topic, a thread's first job) kept whatever position its fetches had reached. Seen on the
three-node cluster, before this: a thread's first Observer job, on a jobs partition never
committed, that no worker ran until the next rebalance (3 runs of 13 under load; how the record
got past the stream unprocessed was not pinned down — streams/commit_offsets.py closes one way).

The rule: a partition with no committed offset (or 0) is sought to its beginning, which is what
``consumer_auto_offset_reset="earliest"`` means for it; the others as aiokafka does. A record
already processed there is read again, and dropped as a duplicate by the processor (or re-run, for
a job: its result is then a duplicate too).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class SeekEveryPartition:
    """Mixin for Faust's ``AIOKafkaConsumerThread``: ``seek_to_committed`` leaves no partition unsought."""

    async def seek_to_committed(self) -> Mapping[Any, int]:
        return await self.call_thread(self._seek_every_partition)  # type: ignore[attr-defined]

    async def _seek_every_partition(self) -> Mapping[Any, int]:
        return await seek_every_partition(self._ensure_consumer())  # type: ignore[attr-defined]


async def seek_every_partition(consumer: Any) -> Mapping[Any, int]:
    """``consumer.seek_to_committed()``, then the partitions it left where they were to their start."""
    committed = await consumer.seek_to_committed()
    unsought = [tp for tp, offset in committed.items() if not offset or offset <= 0]
    if unsought:
        await consumer.seek_to_beginning(*unsought)
    return committed
