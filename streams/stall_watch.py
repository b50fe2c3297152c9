"""Is the worker wedged? The broker's committed offsets against the offsets the worker acknowledged.

A worker that acknowledged input records believes their effects will commit within a moment. If
the broker's committed offset for that partition stays behind for long while the broker answers,
the transaction holding them is lost to the worker (seen after a broker restart: Faust went on as
if committed, the outputs stayed in a transaction nobody would end, and the processor waited
forever for results of jobs nobody could read). In-memory state is then ahead of what is
committed, so the only sound recovery is to start again from the last commit.

Pure bookkeeping, no IO and no clock: the shell (streams/stall_guard.py) feeds it acknowledgements,
the broker's answers and the time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Hashable

Partition = Hashable  # a (topic, partition) pair in practice


@dataclass(frozen=True)
class Stall:
    partition: Partition
    acked: int  # next offset the worker acknowledged (Kafka's commit convention: last + 1)
    committed: int | None  # what the broker holds; None when nothing was ever committed
    seconds: float  # how long the broker has been answering without the commit moving up to ``acked``


@dataclass
class _Behind:
    target: int
    since: float


@dataclass
class StallWatch:
    limit_s: float
    _acked: dict[Partition, int] = field(default_factory=dict)
    _behind: dict[Partition, _Behind] = field(default_factory=dict)

    def acked(self, partition: Partition, next_offset: int) -> None:
        self._acked[partition] = max(next_offset, self._acked.get(partition, 0))

    def keep_only(self, assigned: Iterable[Partition]) -> None:
        """After a rebalance: a partition that moved away is not ours to commit any more."""
        kept = set(assigned)
        for table in (self._acked, self._behind):
            for partition in [p for p in table if p not in kept]:
                del table[partition]

    def broker_unreachable(self) -> None:
        """Nothing can commit without a broker: the clock restarts once it answers again."""
        self._behind.clear()

    def check(self, committed: Mapping[Partition, int], now: float) -> list[Stall]:
        """Partitions whose commit has not reached an offset acknowledged ``limit_s`` ago or earlier.

        The clock for a partition starts at the first answer that shows it behind, and restarts
        whenever the commit passes the offset it was waiting for (the worker is moving, just busy).
        """
        stalls = []
        for partition, acked in self._acked.items():
            done = committed.get(partition)
            if done is not None and done >= acked:
                self._behind.pop(partition, None)
                continue
            behind = self._behind.get(partition)
            if behind is None or (done is not None and done >= behind.target):
                self._behind[partition] = _Behind(acked, now)
                continue
            if now - behind.since >= self.limit_s:
                stalls.append(Stall(partition, acked, done, now - behind.since))
        return stalls
