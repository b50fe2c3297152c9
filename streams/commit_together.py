"""Faust's transactional producer, committing its partitions' transactions at once, not one by one.

Under ``exactly_once`` Faust keeps one Kafka transaction per (topic group, partition) and commits
them in ``Producer.commit_transactions`` (faust-streaming 0.15.3) one after the other: for each,
``AddOffsetsToTxn`` and ``TxnOffsetCommit`` (its input offsets), then ``EndTxn`` once its records
are acknowledged — three broker round trips each, in series. A worker of two partitions at 1,000
messages/s spent p50 30–60 ms (up to 160 ms) in each commit, and a commit holds the processor's
fence (streams/app.py), so the fold stood still that long five to eight times a second.

Rules this module keeps:

* **Each partition's transaction is committed as Faust does it**: under that transaction's lock
  (the one streams/transactions.py's Outbox holds while queueing records), its offsets sent into
  it, then the commit, then a new transaction begun when asked. Only the partitions' commits run
  concurrently; each one's steps keep their order.
* **Every commit is tried, and a failure is not hidden**: one that raises does not cancel the
  others (each is its own transaction: a partition that committed stays committed, as in Faust's
  loop the partitions before a failure did); the first error is raised once all have ended, so
  the caller (Faust's consumer: a fenced producer crashes the app; our committer retries) sees it
  as before.
* An unknown transactional id is warned about and skipped, as Faust does.
* Each transaction that committed is told to :attr:`ProducerCommittingTogether.on_commit` (the state
  store's tracker: streams/state_checkpoint.py), after the commit and before a new one begins.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from faust.transport.drivers import aiokafka as faust_aiokafka

log = logging.getLogger(__name__)


class ProducerCommittingTogether(faust_aiokafka.Producer):
    on_commit: Callable[[str], None] | None = None  # told each transactional id that committed

    async def commit_transactions(self, tid_to_offset_map: Mapping[str, Mapping[Any, int]], group_id: str,
                                  start_new_transaction: bool = True) -> None:
        outcomes = await asyncio.gather(
            *(self._commit_one(tid, offsets, group_id, start_new_transaction)
              for tid, offsets in tid_to_offset_map.items()),
            return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome

    async def _commit_one(self, transactional_id: str, offsets: Mapping[Any, int], group_id: str,
                          start_new_transaction: bool) -> None:
        async with self._trn_locks[transactional_id]:
            producer = self._transaction_producers.get(transactional_id)
            if producer is None:
                log.warning("om.commit.unknown_transaction", extra={"transactional_id": transactional_id})
                return
            await producer.send_offsets_to_transaction(offsets, group_id)
            await producer.commit_transaction()
            if self.on_commit is not None:
                self.on_commit(transactional_id)
            if start_new_transaction:
                await producer.begin_transaction()
