"""Which open Kafka transactions are *hanging*: open on a partition, forgotten by every coordinator.

A broker can accept a transactional batch and lose the coordinator's record of it (seen here: a
single broker's controlled shutdown). No coordinator will ever write its marker, so the
partition's last stable offset stops there and read-committed consumers see nothing after it.
Worse, when the same transactional id starts again it gets the same producer id, and its first
COMMIT marker commits the forgotten batch too: the outputs of that batch appear twice.

The rule: a transaction is hanging when the partition leader reports it open, then the
coordinator of its producer does not list that partition, then the leader still reports the same
transaction (same producer, epoch and start offset) open. A coordinator lists a partition from
before the producer's first write to it until its marker is written, so a live transaction can
never be open at both ends and unlisted in between. Kafka's ``kafka-transactions.sh find-hanging``
(KIP-664) asks the same question of the coordinator but bounds the race with a transaction-age
filter instead of the second look; the second look makes waiting out a timeout unnecessary.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class OpenTxn:
    """A producer's open transaction on one partition, as its leader reports it."""

    topic: str
    partition: int
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    start_offset: int

    def same_transaction(self, other: OpenTxn) -> bool:
        """Same partition, producer, epoch and first offset: the coordinator epoch may move on."""
        return (self.topic, self.partition, self.producer_id, self.producer_epoch, self.start_offset) == (
            other.topic, other.partition, other.producer_id, other.producer_epoch, other.start_offset)


def hanging(before: Iterable[OpenTxn], coordinator_partitions: Mapping[int, frozenset[tuple[str, int]]],
            after: Iterable[OpenTxn]) -> list[OpenTxn]:
    """``coordinator_partitions``: for each producer id a coordinator knows, the partitions of its
    current transaction (empty when none is ongoing), asked after ``before`` and before ``after``;
    producer ids no coordinator knows are absent."""
    still_open = list(after)
    return [t for t in before
            if (t.topic, t.partition) not in coordinator_partitions.get(t.producer_id, frozenset())
            and any(t.same_transaction(a) for a in still_open)]


def abort_groups(txns: Iterable[OpenTxn]) -> dict[tuple[int, int, int], list[tuple[str, int]]]:
    """One ABORT marker request per (producer id, epoch, coordinator epoch), listing its partitions.

    The marker carries the open transaction's own epoch, and a coordinator epoch no lower than
    the partition last saw (the leader rejects a lower one); never-marked producers report -1.
    """
    groups: dict[tuple[int, int, int], list[tuple[str, int]]] = {}
    for t in txns:
        key = (t.producer_id, t.producer_epoch, max(0, t.coordinator_epoch))
        groups.setdefault(key, []).append((t.topic, t.partition))
    return {key: sorted(parts) for key, parts in groups.items()}
