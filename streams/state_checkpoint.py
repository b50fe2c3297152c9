"""A worker's local store kept across a clean restart: what it reflects, and when it may be adopted.

Issue 20 items 4 and 5: every start made the local store (streams/state_store.py) empty and read the
whole state changelog again — 44.6 s for a million keys (bench 6b), for a deploy's restart as for a
crash. A worker that stops cleanly now leaves its store with a checkpoint, a running worker copies it
now and then with one (streams/state_snapshots.py), and the next worker on the host that is given
those partitions reads only the changelog after it (Kafka Streams' checkpoint file, under
exactly-once only when the store is known to match committed records).

Rules this module keeps:

* **The store reflects committed records only, or it is not kept.** :class:`CommitTracker` follows
  each changelog partition: the offset of the last committed record the store holds (from recovery,
  and from this worker's own records once their transaction committed), and the partitions whose
  records were put in the store but are not committed yet — from before they are put (a batch
  interrupted between its writes and the broker's confirmation leaves its partitions marked). A checkpoint is made only when nothing is
  pending and every key in the store belongs to a partition with a known offset; otherwise the store
  is not kept (after a kill -9 or a restart in place only its last snapshot may be adopted, else the
  next start reads the whole changelog).
* **An offset is a lower bound.** Reading the changelog again from any offset at or before the first
  record the store lacks gives the same store (records are latest values, applied in log order), so
  a partition recovered through markers or aborted records only is read a little again, never less.
* **Adopted only while the changelog still holds what came after it**: within :data:`ADOPT_WITHIN_S`
  of the stop (compaction drops a tombstone 24 h after cleaning it, Kafka's default
  ``delete.retention.ms``), for the same changelog topic, and per partition only if its offset lies
  between the partition's first offset and its last committed record (a topic deleted and made
  again fails this); a partition that fails is read whole, its keys dropped first.
* **Read once.** The checkpoint file is removed when its store is adopted, before anything is written
  to it: a worker that then dies leaves a store no later start trusts, but for a snapshot made since.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import orjson

FILE = "checkpoint.json"
ADOPT_WITHIN_S = 3600.0


@dataclass
class Checkpoint:
    """A store's contents at a clean stop: per changelog partition, the offset of the last committed
    record it reflects and the lookup keys it holds; each key's next idle check; the keys whose items
    the changelog holds in an older form (streams/state_changelog.py ``unwritten``)."""

    topic: str
    closed_at_ms: int
    offsets: dict[int, int]
    keys: dict[int, list[str]]
    idle: dict[str, int] = field(default_factory=dict)
    unwritten: list[str] = field(default_factory=list)

    def to_bytes(self) -> bytes:
        return orjson.dumps({"topic": self.topic, "closed_at_ms": self.closed_at_ms,
                             "offsets": {str(p): o for p, o in self.offsets.items()},
                             "keys": {str(p): k for p, k in self.keys.items()},
                             "idle": self.idle, "unwritten": self.unwritten})

    @classmethod
    def from_bytes(cls, raw: bytes) -> Checkpoint:
        data = orjson.loads(raw)
        keys, idle, unwritten = data["keys"], data.get("idle", {}), data.get("unwritten", [])
        if not (isinstance(idle, dict) and isinstance(unwritten, list)
                and all(isinstance(k, list) for k in keys.values())):
            raise ValueError("not a checkpoint")
        return cls(topic=str(data["topic"]), closed_at_ms=int(data["closed_at_ms"]),
                   offsets={int(p): int(o) for p, o in data["offsets"].items()},
                   keys={int(p): k for p, k in keys.items()}, idle=idle, unwritten=unwritten)

    def fresh(self, now_ms: int) -> bool:
        """Whether a worker (of its changelog topic) may still adopt the store at ``now_ms``."""
        return abs(now_ms - self.closed_at_ms) <= ADOPT_WITHIN_S * 1000


class Captured:
    """The parts of a checkpoint, copied at one moment (:meth:`LocalChangelog.capture`)."""

    def __init__(self, topic: str, offsets: dict[int, int], keys: list[str], partitions: dict[str, int],
                 idle: dict[str, int], unwritten: list[str]) -> None:
        self.topic, self.offsets, self.keys, self.partitions = topic, offsets, keys, partitions
        self.idle, self.unwritten, self.at_ms = idle, unwritten, int(time.time() * 1000)

    def checkpoint(self) -> Checkpoint | None:
        """The checkpoint, or None if a key has no partition the store has an offset for."""
        keys: dict[int, list[str]] = {}
        for key in self.keys:
            partition = self.partitions.get(key)
            if partition not in self.offsets:
                return None
            keys.setdefault(partition, []).append(key)
        return Checkpoint(topic=self.topic, closed_at_ms=self.at_ms, offsets=self.offsets, keys=keys,
                          idle=self.idle, unwritten=sorted(self.unwritten))


def write(directory: Path, checkpoint: Checkpoint) -> None:
    """Write the checkpoint into ``directory`` durably: a whole file or none."""
    temporary = directory / (FILE + ".tmp")
    with open(temporary, "wb") as out:
        out.write(checkpoint.to_bytes())
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, directory / FILE)
    _sync_directory(directory)


def read(directory: Path) -> Checkpoint | None:
    """The checkpoint in ``directory`` (None: none, or unreadable)."""
    try:
        return Checkpoint.from_bytes((directory / FILE).read_bytes())
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def take(directory: Path) -> None:
    """Remove the checkpoint of a store being adopted, durably, before it is written to."""
    (directory / FILE).unlink(missing_ok=True)
    _sync_directory(directory)


def _sync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class CommitTracker:
    """Which changelog records the local store reflects, by partition (see the module's rules)."""

    def __init__(self) -> None:
        self.offsets: dict[int, int] = {}  # partition -> last committed record the store reflects
        self._pending: dict[str, dict[int, int]] = {}  # transactional id -> {partition: last record sent}
        self._unconfirmed: set[int] = set()  # partitions a batch is writing, its records not yet confirmed

    def writing(self, partitions: Iterable[int]) -> None:
        """A batch is about to put records of ``partitions`` in the store."""
        self._unconfirmed.update(partitions)

    def confirmed(self, partitions: Iterable[int]) -> None:
        """That batch's records were accepted (and told with :meth:`sent`)."""
        self._unconfirmed.difference_update(partitions)

    def recovered(self, partition: int, offset: int) -> None:
        """Recovery put the committed record at ``offset`` in the store."""
        if offset > self.offsets.get(partition, -1):
            self.offsets[partition] = offset

    def sent(self, transactional_id: str, partition: int, last_offset: int) -> None:
        """Records up to ``last_offset``, put in the store, were accepted in that transaction."""
        pending = self._pending.setdefault(transactional_id, {})
        if last_offset > pending.get(partition, -1):
            pending[partition] = last_offset

    def committed(self, transactional_id: str) -> None:
        """The transaction committed: what it sent is now committed."""
        for partition, offset in self._pending.pop(transactional_id, {}).items():
            self.recovered(partition, offset)

    def keep_only(self, partitions: Iterable[int]) -> None:
        """Every other partition moved away (its keys left the store)."""
        kept = set(partitions)
        for partition in [p for p in self.offsets if p not in kept]:
            del self.offsets[partition]
        for pending in self._pending.values():
            for partition in [p for p in pending if p not in kept]:
                del pending[partition]
        self._unconfirmed.intersection_update(kept)

    def consistent(self) -> dict[int, int] | None:
        """The offsets, if the store holds no record of an uncommitted transaction; else None."""
        if self._unconfirmed or any(self._pending.values()):
            return None
        return dict(self.offsets)
