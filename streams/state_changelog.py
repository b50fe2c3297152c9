"""The state changelog: each key's state as small records, each written when what it holds changed.

Issue 20 item 2: a batch used to write every touched key's whole :class:`KeyState` to the changelog,
unobserved window included, so the bytes written per message grew with the window (131 KiB per
write on a 2,000-message thread, 76 % of it message bodies the messages topic already holds); then
its record and its lists of token counts and cycle ids, written whole, still grew with the thread.

Rules this module keeps:

* **Record kinds on the one compacted changelog** Faust recovers, keyed by JSON strings (their
  shapes, map and chain: streams/changelog_parts.py):
  ``<lookup key>`` → the slim state: the state without its collections, with the last id and the
  count of each chain (``{"idle": hint, "chains": {...}, "state": ...}``; the hint:
  streams/idle_schedule.py), written every batch; a tombstone deletes the key;
  ``\\0m\\0<lookup key>\\0<message id>`` → a window message and its token count, in a chain (a window
  holds an id once: the core replaces a message by its id): written when it enters the window (or
  changes there), tombstoned when it leaves;
  ``\\0o\\0<lookup key>\\0<message id>`` → an observed id's event time (a map): written when the
  message is observed, tombstoned when the duplicate memory forgets it;
  ``\\0a\\0<lookup key>\\0<cycle id>`` → an applied cycle id (a chain): written when the cycle is
  applied, tombstoned when it falls out of the last 256;
  ``\\0f\\0<lookup key>\\0<cycle id>`` → an in-flight job (a chain);
  ``\\0t\\0<lookup key>\\0<thread id>`` → a thread's hints, title and values (a map);
  the record's own kinds (``\\0r\\0``, ``\\0x\\0``, ``\\0c\\0``): streams/record_parts.py.
  A lookup key holds no control character (schemas' ``LookupKey``), so a key starting with ``\\0`` is
  never a lookup key, and ``<family><lookup key>\\0`` prefixes that key's records alone.
* **Bytes per message are O(that message)**: a batch writes its keys' slim states and, for each
  collection that changed, the items that are new or changed and tombstones for the ones gone
  (:func:`writes`). A collection whose ids cannot key a chain (a cycle id twice, a token count for a
  message not in the window; the core makes neither) stays in the slim state, so every state reads
  back equal to the state written.
* **A recovered state has every item it names.** A state and its items are written in the batch's
  transaction, the slim state last; an item is tombstoned only in the transaction of a state that no
  longer names it. Recovery reads committed records only.
* **Recovery only puts records** into the process's local copy of the changelog
  (streams/state_store.py), newest last; a state is assembled from its records when it is used
  (:func:`read_state`), so a partition Faust kept through a rebalance and re-reads from where it
  was finds the items it read before, and recovering a million keys decodes none of them.
* **Kept across a clean stop, copied across a crash** (streams/state_checkpoint.py,
  streams/state_snapshots.py): the local copy says which committed records it reflects
  (:class:`streams.state_checkpoint.CommitTracker`: recovery's records, and this worker's own once
  their transaction committed); when it reflects committed records only, it is kept at exit and
  copied now and then, each with a checkpoint (:meth:`LocalChangelog.capture`); a worker that adopts
  one takes the partitions it was given from the checkpoint's offsets (:meth:`LocalChangelog.adopt`)
  and drops the rest of it.
* **An older worker's records are still read**: a whole state, or a slim state naming its window by
  ids beside a whole record. Neither has this form's items, so the key's next write writes every
  item of its state (``unwritten``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from operator import attrgetter
from pathlib import Path
from typing import Any

import faust
import orjson
from faust.stores.memory import Store as MemoryStore

from processors.machine import InFlight, KeyState
from schemas.messages import ChatMessage
from schemas.record import ThreadMeta
from streams.changelog_parts import (Part, chain_head, chain_parts, chainable, map_parts, read_chain, read_map,
                                     report_missing)
from streams.idle_schedule import IdleSchedule
from streams.state_checkpoint import Captured, Checkpoint, CommitTracker
from streams.record_parts import FAMILIES as RECORD_FAMILIES
from streams.record_parts import HEAD as RECORD
from streams.record_parts import read_record, record_parts
from streams.state_store import PartStore, SpilledStates, open_parts

log = logging.getLogger(__name__)

BODY, OBSERVED, APPLIED, FLIGHT, THREAD = "\x00m\x00", "\x00o\x00", "\x00a\x00", "\x00f\x00", "\x00t\x00"
FAMILIES = (BODY, OBSERVED, APPLIED, FLIGHT, THREAD, *RECORD_FAMILIES)
_ID = attrgetter("id")
# the chained collections besides the window: field -> (family, an item's id, its payload, the item read back)
CHAINS: dict[str, tuple[str, Callable[[Any], str], Callable[[Any], bytes], Callable[[str, bytes], Any]]] = {
    "applied_cycles": (APPLIED, str, lambda cycle_id: b"", lambda cycle_id, _: cycle_id),
    "in_flight": (FLIGHT, attrgetter("cycle_id"), InFlight.to_bytes, lambda _, payload: orjson.loads(payload)),
}
_HINTED, _CHAINED = b'{"idle":"', b'","chains":'
_AWAY = frozenset({"window", "record", "observed", "threads", "message_tokens", *CHAINS})
Write = tuple[bytes, bytes | None]  # (JSON key, value or tombstone)


def body_key(key: str, message_id: str) -> str:
    return f"{BODY}{key}\x00{message_id}"


def encode_state(state: KeyState, idle: str = "") -> bytes:
    """The slim state record of ``state``; ``idle``: the idle schedule's hint."""
    kept = set()  # collections the slim state holds itself
    chains = {"window": [state.window[-1].id, len(state.window)]} if state.window else {}
    if not state.tokens_only_of_window():  # most often known from the core's map, not a pass over the window
        kept.add("message_tokens")
    for field, (_, ident, _, _) in CHAINS.items():
        items = _chained(state, field)
        if items is None:
            kept.add(field)
        elif items:
            chains[field] = chain_head(items, ident)
    slim = state.__pydantic_serializer__.to_json(state, exclude_none=True, exclude=_AWAY - kept)
    return _HINTED + idle.encode() + _CHAINED + orjson.dumps(chains) + b',"state":' + slim + b"}"


def writes(key: str, before: KeyState | None, after: KeyState | None, *, whole: bool = False,
           idle: str = "") -> list[Write]:
    """What the changelog needs for ``key`` moving from ``before`` (as last written) to ``after``
    (None: deleted). ``whole``: the changelog holds ``before`` in an older form; ``idle``: the idle
    schedule's hint for ``after`` (streams/idle_schedule.py)."""
    return [(orjson.dumps(part), value) for part, value in
            changed_parts(key, before, after, whole=whole, idle=idle)]


def changed_parts(key: str, before: KeyState | None, after: KeyState | None, *, whole: bool = False,
                  idle: str = "") -> list[Part]:
    """:func:`writes` with each changelog key as its string (what the local store is keyed by)."""
    out: list[Part] = []

    def changed(field: str) -> bool:  # fields are replaced, never written: unchanged is the same object
        return before is None or after is None or whole or getattr(after, field) is not getattr(before, field)

    if changed("window") or changed("message_tokens"):
        out += _window_parts(key, before, after, whole)
    for field, family, encode in (("observed", OBSERVED, b"%d".__mod__), ("threads", THREAD, ThreadMeta.to_bytes)):
        if changed(field):
            out += map_parts(f"{family}{key}\x00", getattr(before, field, {}), getattr(after, field, {}), encode, whole)
    for field, (family, ident, encode, _) in CHAINS.items():
        if changed(field):
            out += chain_parts(f"{family}{key}\x00", _chained(before, field) or (), _chained(after, field) or (),
                               ident, encode, whole)
    if changed("record"):
        out += record_parts(key, getattr(before, "record", None), getattr(after, "record", None), whole)
    out.append((key, None if after is None else encode_state(after, idle)))
    return out


def read_state(parts: PartStore, key: str) -> KeyState | None:
    """``key``'s state from its records in ``parts`` (None: it has no state record)."""
    raw = parts.get(key)
    if raw is None:
        return None
    wrapper = orjson.loads(raw)
    state = {**wrapper["state"], "record": read_record(parts, key),
             "observed": {k: int(v) for k, v in read_map(parts, f"{OBSERVED}{key}\x00").items()}}
    if "window_ids" in wrapper:  # an older worker's: its window by ids, its other collections in the state
        return KeyState.from_obj({**state, "window": _bodies(parts, key, wrapper["window_ids"])})
    chains = wrapper["chains"]
    window, tokens = [], {}
    for mid, payload in read_chain(parts, f"{BODY}{key}\x00", chains["window"]) if "window" in chains else ():
        count, _, body = payload.partition(b"\n")
        window.append(ChatMessage.from_obj(orjson.loads(body)))
        if count:
            tokens[mid] = int(count)
    state.setdefault("message_tokens", tokens)
    state["threads"] = {k: orjson.loads(v) for k, v in read_map(parts, f"{THREAD}{key}\x00").items()}
    for field, (family, _, _, decode) in CHAINS.items():
        if field in chains:
            state[field] = [decode(i, p) for i, p in read_chain(parts, f"{family}{key}\x00", chains[field])]
    return KeyState.from_obj({**state, "window": window})


def drop_parts(parts: PartStore, key: str) -> None:
    """Remove every record of ``key`` from ``parts``."""
    parts.put(key, None)
    parts.put(RECORD + key, None)
    for family in FAMILIES:
        parts.drop_range(f"{family}{key}\x00")


def idle_hint(raw: bytes) -> str:
    """The idle schedule's hint a state record carries ("" in records written before hints)."""
    if not raw.startswith(_HINTED):
        return ""
    return raw[len(_HINTED):raw.index(b'"', len(_HINTED))].decode()


def current(raw: bytes) -> bool:
    """Whether a slim state record is in this form (not an older worker's)."""
    return raw.startswith(_HINTED) and raw.startswith(_CHAINED, raw.index(b'"', len(_HINTED)))


def _window_parts(key: str, before: KeyState | None, after: KeyState | None, whole: bool) -> list[Part]:
    """The window's bodies, each with its token count (a count that changed writes its body again)."""
    old, new = getattr(before, "window", ()), getattr(after, "window", ())
    tokens = getattr(after, "message_tokens", {})
    had = getattr(before, "message_tokens", {})
    dirty = {i for i, _ in tokens.items() ^ had.items()} if tokens is not had else ()

    def body(message: ChatMessage) -> bytes:
        count = tokens.get(message.id)
        return (b"" if count is None else b"%d" % count) + b"\n" + message.to_bytes()

    return chain_parts(f"{BODY}{key}\x00", old, new, _ID, body, whole, dirty)


def _chained(state: KeyState | None, field: str) -> tuple[Any, ...] | None:
    """A chained collection (None: its ids cannot key a chain; the slim state keeps it)."""
    if state is None:
        return ()
    items = getattr(state, field)
    return items if chainable(list(map(CHAINS[field][1], items))) else None


def _bodies(parts: PartStore, key: str, ids: list[str]) -> list[ChatMessage]:
    """An older worker's window: its bodies by id (plain messages)."""
    found = [parts.get(body_key(key, mid)) for mid in ids]
    if None in found:  # not expected: every body is written in its state's transaction
        report_missing(BODY, found.count(None))
    return [ChatMessage.from_obj(orjson.loads(b)) for b in found if b is not None]


class _Store(MemoryStore):
    """Faust's memory store with :class:`SpilledStates` as its data."""

    om_tracker: CommitTracker | None = None  # the local changelog's (set with the data)

    async def on_recovery_completed(self, active_tps: Any, standby_tps: Any) -> None:
        partitions = {partition for _, partition in active_tps}
        for key in [k for k, p in self._key_partition.items() if p not in partitions]:
            self.data.discard(key)  # no state is read to be forgotten
            self._key_partition.pop(key, None)
        if self.om_tracker is not None:
            self.om_tracker.keep_only(partitions)


class LocalChangelog:
    """This process's copy of the changelog (``states.parts``) and the states read from it."""

    def __init__(self, states: SpilledStates, schedule: IdleSchedule, key_partition: dict[str, int],
                 topic: str = "", owners: Mapping[str, int] | None = None) -> None:
        self.states, self.schedule, self.key_partition = states, schedule, key_partition
        self.unwritten: set[str] = set()  # keys whose items the changelog holds in an older form
        self.topic, self.owners = topic, owners if owners is not None else {}  # the fold's keys -> partition
        self.tracker = CommitTracker()
        states.parts.checkpoint = self.checkpoint

    def adopt(self, bounds: Mapping[int, tuple[int, int]]) -> dict[int, int]:
        """Take the kept store's checkpoint (once), given the assigned partitions' bounds: (Faust's start
        offset, the last committed record). A partition whose checkpoint offset lies within them is
        adopted: its keys come back and recovery reads after the returned offset; every other key of
        the checkpoint is dropped from the store."""
        parts = self.states.parts
        checkpoint, parts.adopted = parts.adopted, None
        if checkpoint is None:
            return {}
        started = time.monotonic()
        taken = {p: offset for p, offset in checkpoint.offsets.items()
                 if p in bounds and bounds[p][0] <= offset <= bounds[p][1]}
        adopted: set[str] = set()
        for partition, keys in checkpoint.keys.items():
            if partition not in taken:
                for key in keys:
                    drop_parts(parts, key)
                continue
            adopted.update(keys)  # in bulk: a million keys come back in well under a second
            self.key_partition.update(dict.fromkeys(keys, partition))
        self.states.adopt(adopted)
        every = len(taken) == len(checkpoint.offsets)
        self.schedule.restore(checkpoint.idle if every else {k: t for k, t in checkpoint.idle.items() if k in adopted})
        self.unwritten.update(adopted.intersection(checkpoint.unwritten))
        for partition, offset in taken.items():
            self.tracker.recovered(partition, offset)
        log.info("om.state_store.adoption", extra={"adopted": sorted(taken),
                                                   "dropped": sorted(set(checkpoint.offsets) - set(taken)),
                                                   "seconds": round(time.monotonic() - started, 3)})
        return taken

    def checkpoint(self) -> Checkpoint | None:
        """What the store holds, if it reflects committed records only (else None: not kept)."""
        captured = self.capture()
        return None if captured is None else captured.checkpoint()

    def capture(self) -> Captured | None:
        """What :meth:`checkpoint` needs, copied whole (C-level copies: ~0.1 s for a million keys),
        so the checkpoint can be built while the store goes on; None if it holds uncommitted records."""
        offsets = self.tracker.consistent()
        if offsets is None or self.states.parts.adopted is not None or not self.states.clean:
            return None
        return Captured(self.topic, offsets, list(self.states), {**self.key_partition, **self.owners},
                        self.schedule.snapshot(), list(self.unwritten))

    def recover(self, key: str, partition: int, raw: bytes | None, offset: int = -1) -> None:
        """One changelog record read by recovery (committed records only, in log order), at ``offset``."""
        self.tracker.recovered(partition, offset)
        states, parts = self.states, self.states.parts
        if key.startswith("\x00"):
            parts.put(key, raw)
            states.recovered(key[3:].partition("\x00")[0])
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
            if current(raw):
                self.unwritten.discard(key)
            else:  # an older worker's slim state: its next write writes every item
                self.unwritten.add(key)
            self.schedule.recovered(key, idle_hint(raw))
            return
        state = KeyState.from_obj(orjson.loads(raw))  # an older worker's whole state: its parts
        drop_parts(parts, key)  # replace any read before
        for part_key, value in changed_parts(key, None, state):
            parts.put(part_key, value)
        states.recovered(key, present=True)
        self.unwritten.add(key)  # the changelog has no items of it: the next write writes them all
        self.schedule.recovered(key, "")

    def writes(self, key: str, before: KeyState | None, after: KeyState | None) -> list[Write]:
        """What the changelog needs for ``key``'s change, put in the local parts as it is returned."""
        whole = key in self.unwritten
        self.unwritten.discard(key)
        changed = changed_parts(key, before, after, whole=whole, idle=self.schedule.written(key, after))
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
        self.owners: dict[str, int] = {}  # the partition of each key the fold wrote (streams/app.py)
        super().__init__(*args, **kwargs)

    def _new_store(self) -> Any:
        store = _Store("memory://", self.app, self, table_name=self.name, loop=self.loop)
        topic = self.changelog_topic.get_topic_name()
        store.data = SpilledStates(open_parts(self._data_dir, topic), read_state, drop_parts, self._state_cache)
        self._local = LocalChangelog(store.data, self.schedule, store._key_partition, topic, self.owners)
        store.om_tracker = self._local.tracker
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
            message = event.message
            recover(self._to_key(event.key), message.partition, message.value, message.offset)

    def recover_raw(self, partition: int, offset: int, key: bytes | None, value: bytes | None) -> None:
        """One changelog record as the broker holds it (streams/bulk_recovery.py reads them)."""
        if key is not None:
            self.local.recover(orjson.loads(key), partition, value, offset)
        else:
            self.local.tracker.recovered(partition, offset)

    def writes(self, key: str, before: KeyState | None, after: KeyState | None) -> list[Write]:
        return self.local.writes(key, before, after)
