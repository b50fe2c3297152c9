"""Records aiokafka hands over are records Faust delivers; a seek back reaches every partition.

Two defects of faust-streaming 0.15.3's aiokafka driver, each of which let the consumer's position
pass records that no agent ever received — with nothing to bring them back until the next
rebalance, which a stable group never has. Seen on a busy machine: a worker that joined the group
recovered its state and then read nothing for 90 s, its partition's position at the end, the jobs
waiting there never delivered (tests/cluster/test_worker_loss.py).

1. **An empty partition set means "all" to aiokafka.** Faust hands its *live* set of active
   partitions to ``Fetcher.fetched_records`` on the consumer thread, while the event loop's thread
   pauses and resumes partitions in it. aiokafka filters by that set only when it is non-empty, so
   a set emptied meanwhile (recovery pauses the changelog before resuming the inputs) returns every
   buffered partition — its position advanced — and Faust then drops each record whose partition
   is not active. Rule: the consumer thread fetches for a snapshot of the set, and nothing when the
   snapshot is empty. A fetch waits (Faust asks for up to 1 s) in slices of ``SLICE_S``, taking a
   fresh snapshot for each: aiokafka waits out the whole timeout for records of the partitions it
   was given, so a snapshot taken while recovery still paused the inputs (only the changelog
   active) held the first input record for up to a second after every start and rebalance
   (bench 2b: "→ folded 1.0 s" after a restart).
2. **"Seek back to committed" skips partitions never committed.** Faust seeks to the committed
   offsets to re-read what it dropped (after a rebalance, or a fetch while flow was stopped), and
   aiokafka's ``seek_to_committed`` seeks only partitions whose commit is above 0, leaving the
   others where the dropped records put them. Rule: an input partition committed at 0 or never
   goes to its first offset (what the consumer's reset rule, "earliest", means).
   Changelog partitions are left to table recovery, which seeks them itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from faust.types import TP

SLICE_S = 0.05  # a partition resumed during a fetch is in the next slice


class FetchPositions:
    """Mixed into Faust's aiokafka consumer thread (streams/fetch_wait.py builds the class)."""

    app: Any  # Faust's, as are ``_ensure_consumer`` (the aiokafka consumer) and ``call_thread``

    async def _fetch_records(self, consumer: Any, active_partitions: set[TP] | None, timeout: float | None = None,
                             max_records: int | None = None) -> Mapping[TP, list[Any]]:
        fetch = super()._fetch_records  # type: ignore[misc]
        if active_partitions is None:  # client-only: every partition
            return await fetch(consumer, None, timeout=timeout, max_records=max_records)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (timeout or 0.0)
        while True:
            wanted = set(active_partitions)  # the live set, as it is now
            remaining = max(0.0, deadline - loop.time())
            if wanted:
                records = await fetch(consumer, wanted, timeout=min(remaining, SLICE_S), max_records=max_records)
                if records:
                    return records
            elif remaining:
                await asyncio.sleep(min(remaining, SLICE_S))
            if loop.time() >= deadline:
                return {}

    async def seek_to_committed(self) -> Mapping[TP, int]:
        return await self.call_thread(self._seek_to_committed_or_start)  # type: ignore[attr-defined]

    async def _seek_to_committed_or_start(self) -> Mapping[TP, int]:
        consumer = self._ensure_consumer()  # type: ignore[attr-defined]
        committed = await consumer.seek_to_committed()
        changelogs = self.app.tables.changelog_topics
        unseeked = [tp for tp, offset in committed.items() if not offset and tp.topic not in changelogs]
        if unseeked:  # committed at 0 or never: their start (a reset in flight is to "earliest" too)
            await consumer.seek_to_beginning(*unseeked)
        return committed
