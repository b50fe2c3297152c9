"""The state changelog: each key's state without its window's bodies, and each body written once.

Issue 20 item 2: a batch used to write every touched key's whole :class:`KeyState` to the changelog,
unobserved window included, so the bytes written per message grew with the window (131 KiB per
write on a 2,000-message thread, 76 % of it message bodies the messages topic already holds).

Rules this module keeps:

* **Four record kinds on the one compacted changelog** Faust recovers, keyed by JSON strings:
  ``<lookup key>`` → the state without its record and observed ids, and with its window as ids
  (``{"idle": hint, "window_ids": [...], "state": ...}``; the hint: streams/idle_schedule.py), a
  tombstone deletes the key;
  ``\\0r\\0<lookup key>`` → the key's :class:`OMRecord` (observations, chunks), written when it changed;
  ``\\0m\\0<lookup key>\\0<message id>`` → one window message, written when it enters the window (or
  is updated there) and tombstoned when it leaves;
  ``\\0o\\0<lookup key>\\0<message id>`` → an observed id's event time, written when the message is
  observed and tombstoned when the duplicate memory forgets it.
  Ids never hold control characters (schemas' ``Identifier``), so these keys never name a lookup key.
* **Bytes per message are O(that message)**: a batch writes its keys' slim states, the records that
  a cycle changed, and one record (or tombstone) per message that entered, changed, left the window
  or the observed ids (:func:`writes`). What still grows with a thread is bounded: the window's
  token counts (a number per message) and the last 256 applied cycle ids.
* **A recovered state has every body it names.** A state and its bodies are written in the batch's
  transaction; a body is tombstoned only when its message left the window, in the transaction of the
  state that no longer names it. Recovery reads committed records only.
* **Recovery only puts records** into the process's local copy of the changelog
  (streams/state_store.py), newest last; a state is assembled from its records when it is used
  (:func:`read_state`), so a partition Faust kept through a rebalance and re-reads from where it
  was finds the bodies it read before, and recovering a million keys decodes none of them.
* **An older worker's full state is still read**; its bodies were never written on their own, so the
  key's next write writes its whole window (``unwritten``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import faust
import orjson
from faust.stores.memory import Store as MemoryStore

from processors.machine import KeyState
from schemas.messages import ChatMessage
from streams import metrics
from streams.idle_schedule import IdleSchedule
from streams.state_store import PartStore, SpilledStates, open_parts

log = logging.getLogger(__name__)

BODY, RECORD, OBSERVED = "\x00m\x00", "\x00r\x00", "\x00o\x00"
_HINTED = b'{"idle":"'
_SLIM = {"window", "record", "observed"}
Write = tuple[bytes, bytes | None]  # (JSON key, value or tombstone)


def body_key(key: str, message_id: str) -> str:
    return f"{BODY}{key}\x00{message_id}"


def encode_state(state: KeyState, idle: str = "") -> bytes:
    ids = orjson.dumps([m.id for m in state.window])
    slim = state.__pydantic_serializer__.to_json(state, exclude_none=True, exclude=_SLIM)
    return _HINTED + idle.encode() + b'","window_ids":' + ids + b',"state":' + slim + b"}"


def writes(key: str, before: KeyState | None, after: KeyState | None, *, whole_window: bool = False,
           idle: str = "") -> list[Write]:
    """What the changelog needs for ``key`` moving from ``before`` (as last written) to ``after``
    (None: deleted). ``whole_window``: ``before``'s bodies were never written on their own;
    ``idle``: the idle schedule's hint for ``after`` (streams/idle_schedule.py)."""
    return [(orjson.dumps(part), value) for part, value in
            changed_parts(key, before, after, whole_window=whole_window, idle=idle)]


def changed_parts(key: str, before: KeyState | None, after: KeyState | None, *, whole_window: bool = False,
                  idle: str = "") -> list[tuple[str, bytes | None]]:
    """:func:`writes` with each changelog key as its string (what the local store is keyed by)."""
    out: list[tuple[str, bytes | None]] = []
    if before is None or after is None or whole_window or after.window is not before.window:  # else: unchanged
        had = {} if before is None or whole_window else {m.id: m for m in before.window}
        has = {} if after is None else {m.id: m for m in after.window}
        out += [(body_key(key, mid), None) for mid in had if mid not in has]
        out += [(body_key(key, mid), m.to_bytes()) for mid, m in has.items() if had.get(mid) is not m]
    seen = {} if before is None or whole_window else before.observed
    sees = {} if after is None else after.observed
    if sees is not seen:
        out += [(f"{OBSERVED}{key}\x00{mid}", None) for mid in seen if mid not in sees]
        out += [(f"{OBSERVED}{key}\x00{mid}", b"%d" % at) for mid, at in sees.items() if seen.get(mid) != at]
    if after is None:
        out.append((RECORD + key, None))
    elif before is None or whole_window or after.record is not before.record:  # unchanged: the same object
        out.append((RECORD + key, after.record.to_bytes()))
    out.append((key, None if after is None else encode_state(after, idle)))
    return out


def read_state(parts: PartStore, key: str) -> KeyState | None:
    """``key``'s state from its records in ``parts`` (None: it has no state record)."""
    raw = parts.get(key)
    if raw is None:
        return None
    wrapper = orjson.loads(raw)
    record = parts.get(RECORD + key)
    window, missing = [], 0
    for mid in wrapper["window_ids"]:
        body = parts.get(body_key(key, mid))
        if body is None:
            missing += 1
        else:
            window.append(ChatMessage.from_obj(orjson.loads(body)))
    if missing:  # not expected: every body is written in its state's transaction
        log.error("om.recovery.missing_bodies", extra={"messages": missing})
        metrics.failure("missing-window-bodies", missing)
    prefix = f"{OBSERVED}{key}\x00"
    observed = {k[len(prefix):]: int(v) for k, v in parts.scan(prefix)}
    return KeyState.from_obj({**wrapper["state"], "record": None if record is None else orjson.loads(record),
                              "window": window, "observed": observed})


def drop_parts(parts: PartStore, key: str) -> None:
    """Remove every record of ``key`` from ``parts``."""
    parts.put(key, None)
    parts.put(RECORD + key, None)
    parts.drop_range(f"{BODY}{key}\x00")
    parts.drop_range(f"{OBSERVED}{key}\x00")


def idle_hint(raw: bytes) -> str:
    """The idle schedule's hint a state record carries ("" in records written before hints)."""
    if not raw.startswith(_HINTED):
        return ""
    return raw[len(_HINTED):raw.index(b'"', len(_HINTED))].decode()


class _Store(MemoryStore):
    """Faust's memory store with :class:`SpilledStates` as its data."""

    async def on_recovery_completed(self, active_tps: Any, standby_tps: Any) -> None:
        partitions = {partition for _, partition in active_tps}
        for key in [k for k, p in self._key_partition.items() if p not in partitions]:
            self.data.discard(key)  # no state is read to be forgotten
            self._key_partition.pop(key, None)


class LocalChangelog:
    """This process's copy of the changelog (``states.parts``) and the states read from it."""

    def __init__(self, states: SpilledStates, schedule: IdleSchedule, key_partition: dict[str, int]) -> None:
        self.states, self.schedule, self.key_partition = states, schedule, key_partition
        self.unwritten: set[str] = set()  # keys whose bodies the changelog does not hold on their own

    def recover(self, key: str, partition: int, raw: bytes | None) -> None:
        """One changelog record read by recovery (committed records only, in log order)."""
        states, parts = self.states, self.states.parts
        if key.startswith("\x00"):
            parts.put(key, raw)
            states.recovered(key[3:].partition("\x00")[0] if key.startswith((BODY, OBSERVED)) else key[len(RECORD):])
            return
        if raw is None:
            states.discard(key)
            self.unwritten.discard(key)
            self.schedule.recovered(key, None)
            self.key_partition.pop(key, None)
            return
        self.key_partition[key] = partition
        if raw.startswith((_HINTED, b'{"window_ids":')):
            parts.put(key, raw)
            states.recovered(key, present=True)
            self.unwritten.discard(key)
            self.schedule.recovered(key, idle_hint(raw))
            return
        state = KeyState.from_obj(orjson.loads(raw))  # an older worker's whole state: its parts, and
        parts.drop_range(f"{OBSERVED}{key}\x00")  # its observed ids replace any read before
        for part_key, value in changed_parts(key, None, state):
            parts.put(part_key, value)
        states.recovered(key, present=True)
        self.unwritten.add(key)  # the changelog has no bodies of it: the next write writes them all
        self.schedule.recovered(key, "")

    def writes(self, key: str, before: KeyState | None, after: KeyState | None) -> list[Write]:
        """What the changelog needs for ``key``'s change, put in the local parts as it is returned."""
        whole = key in self.unwritten
        self.unwritten.discard(key)
        changed = changed_parts(key, before, after, whole_window=whole, idle=self.schedule.written(key, after))
        put = self.states.parts.put
        for part_key, value in changed:
            put(part_key, value)
        self.states.written(key)
        return [(orjson.dumps(part_key), value) for part_key, value in changed]


class StateTable(faust.Table):
    """Faust's table with the changelog read and written by a :class:`LocalChangelog`, its states
    kept by :class:`streams.state_store.SpilledStates`, their idle checks by ``schedule``."""

    def __init__(self, *args: Any, data_dir: Path, state_cache: int, schedule: IdleSchedule,
                 **kwargs: Any) -> None:
        self._data_dir, self._state_cache, self.schedule = data_dir, state_cache, schedule
        self._local: LocalChangelog | None = None
        super().__init__(*args, **kwargs)

    def _new_store(self) -> Any:
        store = _Store("memory://", self.app, self, table_name=self.name, loop=self.loop)
        store.data = SpilledStates(open_parts(self._data_dir), read_state, drop_parts, self._state_cache)
        self._local = LocalChangelog(store.data, self.schedule, store._key_partition)
        return store

    @property
    def opened(self) -> LocalChangelog | None:
        """The local changelog if Faust has made the store (a scrape must not make it)."""
        return self._local

    @property
    def local(self) -> LocalChangelog:
        if self._local is None:
            self.data  # noqa: B018 - Faust makes the store on first use
        assert self._local is not None
        return self._local

    @property
    def states(self) -> SpilledStates:
        return self.local.states

    @property
    def unwritten(self) -> set[str]:
        return self.local.unwritten

    def apply_changelog_batch(self, batch: Iterable[Any]) -> None:
        recover = self.local.recover
        for event in batch:
            recover(self._to_key(event.key), event.message.partition, event.message.value)

    def recover_raw(self, partition: int, key: bytes | None, value: bytes | None) -> None:
        """One changelog record as the broker holds it (streams/bulk_recovery.py reads them)."""
        if key is not None:
            self.local.recover(orjson.loads(key), partition, value)

    def writes(self, key: str, before: KeyState | None, after: KeyState | None) -> list[Write]:
        return self.local.writes(key, before, after)
