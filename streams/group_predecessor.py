"""A restarted worker takes its predecessor's place in the group at once, not a session later.

A worker killed -9 (or one that restarts itself in place, streams/restart.py) never sent its
LeaveGroup. Its successor's JoinGroup then waits for the dead member's session to expire
(``OM_SESSION_TIMEOUT_MS``, 10 s by default): the coordinator holds a rebalance open for every
member it still counts. Kafka's static membership (KIP-345) would avoid that, but a static member
never leaves on a clean stop either (aiokafka sends no LeaveGroup for one), so a scaled-down
worker would hold its partitions for a session instead.

Rules kept:

* **A worker holds a slot for its whole life**, one per consumer group it joins (its Faust app's,
  and the sink's): an exclusive ``flock`` on the first free ``<group>.<n>.lock`` in
  ``<OM_DATA_DIR>/members`` (workers may share a data directory: the processor and LLM roles, two
  workers on one host, the test harness). The kernel releases the lock when the process dies,
  and at an in-place restart (the descriptor is closed on ``exec``).
* **Every assignment records the member id** the worker's consumer holds in its group, in its
  slot's ``.member`` file, written atomically (rename): a kill leaves the old id or the new one.
* **So a member recorded in a slot this process could lock belongs to a process that is gone.**
  At start, before the consumer joins, that member leaves the group on its behalf: one
  LeaveGroup to the group's coordinator (the request a clean stop sends). The group rebalances
  without waiting for the dead session. A live worker is never asked to leave: it holds its lock.
* **Nothing here can stop a start.** "Unknown member" (the session already expired, or a clean
  stop left) is the expected answer after a graceful stop; any other refusal, an unreachable
  coordinator, or no free slot is logged and the start goes on — the session timeout then does
  what it always did.
"""

from __future__ import annotations

import fcntl
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from aiokafka import AIOKafkaClient, ConsumerRebalanceListener
from aiokafka.client import CoordinationType
from aiokafka.errors import KafkaError, for_code
from aiokafka.protocol.group import LeaveGroupRequest

log = logging.getLogger(__name__)
MAX_SLOTS = 256
GONE = {25, 69}  # UNKNOWN_MEMBER_ID, GROUP_ID_NOT_FOUND: nothing to leave
SETTLED = ("left", "already gone")  # outcomes after which the recorded member is no longer in the group


@dataclass
class MemberSlot:
    group: str
    member_file: Path
    lock: IO[str]  # held open (locked) for the process's life

    def record(self, member_id: str) -> None:
        """Called at each assignment (:class:`RecordsMember`)."""
        if not member_id:
            return
        temporary = self.member_file.with_suffix(".tmp")
        temporary.write_text(member_id)
        os.replace(temporary, self.member_file)

    def predecessor(self) -> str | None:
        try:
            return self.member_file.read_text().strip() or None
        except FileNotFoundError:
            return None


def members_dir(data_dir: Path) -> Path:
    return data_dir / "members"


def claim_slot(directory: Path, group: str) -> MemberSlot | None:
    """The first slot of ``group`` in ``directory`` no live process holds; None if all are held."""
    directory.mkdir(parents=True, exist_ok=True)
    for n in range(MAX_SLOTS):
        lock = open(directory / f"{group}.{n}.lock", "a")  # noqa: SIM115 - held until the process ends
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            continue
        return MemberSlot(group, directory / f"{group}.{n}.member", lock)
    log.warning("om.group.no_slot", extra={"group": group, "slots": MAX_SLOTS,
                                           "action": "a restart after a kill waits for the session timeout"})
    return None


class MemberListener(ConsumerRebalanceListener):
    """The same record for a plain aiokafka consumer in a group (the sink's)."""

    def __init__(self, slot: MemberSlot, consumer: Any) -> None:
        self.slot, self.consumer = slot, consumer

    async def on_partitions_revoked(self, revoked: Any) -> None:
        return None

    async def on_partitions_assigned(self, assigned: Any) -> None:
        self.slot.record(self.consumer._coordinator.member_id)


class RecordsMember:
    """Mixed into Faust's aiokafka consumer thread (streams/fetch_wait.py builds the class); the
    app carries its slot as ``om_member_slot`` (streams/worker.py claims it)."""

    app: Any

    async def on_partitions_assigned(self, assigned: Any, generation_id: int = 0) -> None:
        slot = getattr(self.app, "om_member_slot", None)
        if slot is not None:
            slot.record(self._ensure_consumer()._coordinator.member_id)  # type: ignore[attr-defined]
        await super().on_partitions_assigned(assigned, generation_id)  # type: ignore[misc]


async def leave_for_predecessor(bootstrap: str, slot: MemberSlot) -> str | None:
    """Send the slot's recorded member's LeaveGroup; the outcome (None: nothing was recorded)."""
    member_id = slot.predecessor()
    if member_id is None:
        return None
    outcome = await _leave(bootstrap, slot.group, member_id)
    settled = outcome in SETTLED
    if settled:  # else asked again at the next start (the session may end it first)
        slot.member_file.unlink(missing_ok=True)
    level = logging.INFO if settled else logging.WARNING
    log.log(level, "om.group.predecessor", extra={"group": slot.group, "outcome": outcome})
    return outcome


async def _leave(bootstrap: str, group: str, member_id: str) -> str:
    client = AIOKafkaClient(bootstrap_servers=bootstrap, request_timeout_ms=5_000)
    try:
        await client.bootstrap()
        coordinator = await client.coordinator_lookup(CoordinationType.GROUP, group)
        response = await client.send(coordinator, LeaveGroupRequest(group, member_id))
        if response.error_code in GONE:
            return "already gone"
        return "left" if response.error_code == 0 else f"refused: {for_code(response.error_code).__name__}"
    except (KafkaError, OSError) as error:
        return f"not sent: {type(error).__name__}"
    finally:
        await client.close()
