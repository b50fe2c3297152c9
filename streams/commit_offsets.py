"""Which input offsets a commit takes: never past a record still being worked on, and a slow job
holds back only its own offset, not the results of the jobs behind it.

Faust (faust-streaming 0.15.3, ``Consumer._new_offset``) commits the end of the first run of
consecutive acknowledged offsets, with the gaps it saw between fetched records (transaction
markers) counted as acknowledged. Its only check that the run starts at the committed position
lets one offset through (a marker may sit there), and is skipped altogether while the committed
position is unknown or 0 — a fresh partition, and every partition during a rebalance, since
Faust forgets committed positions when partitions are revoked. The Observer/Reflector agent runs
several jobs of a partition at once (``OM_LLM_CONCURRENCY``) and they finish out of order, so a
later job's ack committed the offset past an earlier job still calling its model. Killed, or its
partition moved, the worker never delivered that job's result and the next owner started after
it: the thread's cycle stayed in flight for ever (tests/faults/test_out_of_order_jobs.py).

The rule here, per partition with acknowledgements pending:

* The offset committed is one past the highest acknowledged offset, but never past the lowest
  offset a stream has taken and not acknowledged. Records reach a partition's streams in offset
  order, so every delivered offset below that bound is acknowledged, and an offset between two
  acknowledged ones that was never delivered is no record a read_committed consumer returns (a
  marker, an aborted record).
* A record a stream skipped unread — taken while the flow was off for a rebalance, or fetched in
  the previous generation (``faust/streams.py``: ``value = skipped_value``) — is acknowledged by
  Faust all the same, so the next commit passed it and the record was never processed. Such a
  record was never tracked as taken; its acknowledgement is not recorded here, and the partition,
  sought back to its committed offset after the rebalance, reads it again.
* When a slow job holds the bound where it was, the partition is committed at that same offset
  once for each new acknowledgement behind it: its transaction — the faster jobs' results — then
  commits instead of waiting for the slow call (minutes, with a real model). Those jobs run again
  if the worker dies before the slow one ends; the processor drops their repeated results by
  cycle id.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from faust.types import TP

log = logging.getLogger(__name__)


def install(consumer: Any) -> None:
    """Replace Faust's committable-offset rule (``_filter_committable_offsets``) on ``consumer``,
    and keep acknowledgements of records no stream processed out of it."""
    held: dict[TP, tuple[int, ...]] = {}
    consumer._filter_committable_offsets = lambda tps: committable(consumer, tps, held)
    faust_ack = consumer.ack

    def ack(message: Any) -> bool:
        if not message.tracked and consumer.app.topics.acks_enabled_for(message.topic):
            log.info("om.consumer.skipped_not_acked", extra={"topic": message.topic, "partition": message.partition,
                                                            "offset": message.offset})
            return False
        return faust_ack(message)

    consumer.ack = ack


def committable(consumer: Any, tps: Iterable[TP], held: dict[TP, tuple[int, ...]]) -> dict[TP, int]:
    """The offset to commit for each of ``tps`` that needs a commit; drops the acknowledgements it
    covers. ``held``: per partition, the acknowledgements already committed behind a held bound."""
    offsets: dict[TP, int] = {}
    lowest_taken: dict[TP, int] = {}  # one pass over what the streams hold, not one per partition
    for message in list(consumer._unacked_messages):
        if not message.acked and message.offset < lowest_taken.get(message.tp, message.offset + 1):
            lowest_taken[message.tp] = message.offset
    for tp in tps:
        acked: list[int] = consumer._acked[tp]
        if not acked:
            continue
        top = max(acked) + 1
        bound = min(top, lowest_taken.get(tp, top))
        committed = consumer._committed_offset[tp]
        if committed is not None:
            bound = max(bound, committed)
        behind = tuple(sorted(offset for offset in acked if offset >= bound))
        if len(behind) == len(acked) and held.get(tp) == behind:
            continue  # nothing new since this bound was last committed
        covered = [offset for offset in acked if offset < bound]
        acked[:] = list(behind)
        consumer._acked_index[tp].difference_update(covered)
        gaps = consumer._gap.get(tp)
        if gaps:
            gaps.chop(0, bound)
        held[tp] = behind
        offsets[tp] = bound
    return offsets
