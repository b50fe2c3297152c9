"""The state changelog: each key's state without its window's bodies, and each body written once.

Issue 20 item 2: a batch used to write every touched key's whole :class:`KeyState` to the changelog,
unobserved window included, so the bytes written per message grew with the window (131 KiB per
write on a 2,000-message thread, 76 % of it message bodies the messages topic already holds).

Rules this module keeps:

* **Four record kinds on the one compacted changelog** Faust recovers, keyed by JSON strings:
  ``<lookup key>`` → the state without its record and observed ids, and with its window as ids
  (``{"window_ids": [...], "state": ...}``), a tombstone deletes the key;
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
* **States are assembled once recovery completes** (:class:`StateTable`): only the newest state of a
  key counts, and its bodies come from the records read or, for a partition Faust kept through a
  rebalance and re-reads from where it was, from the state already in memory.
* **An older worker's full state is still read**; its bodies were never written on their own, so the
  key's next write writes its whole window (``unwritten``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, MutableMapping
from typing import Any

import faust
import orjson

from processors.machine import KeyState
from schemas.messages import ChatMessage
from streams import metrics

log = logging.getLogger(__name__)

BODY, RECORD, OBSERVED = "\x00m\x00", "\x00r\x00", "\x00o\x00"
_SLIM = {"window", "record", "observed"}
Write = tuple[bytes, bytes | None]  # (JSON key, value or tombstone)


def body_key(key: str, message_id: str) -> str:
    return f"{BODY}{key}\x00{message_id}"


def encode_state(state: KeyState) -> bytes:
    ids = orjson.dumps([m.id for m in state.window])
    slim = state.__pydantic_serializer__.to_json(state, exclude_none=True, exclude=_SLIM)
    return b'{"window_ids":' + ids + b',"state":' + slim + b"}"


def writes(key: str, before: KeyState | None, after: KeyState | None, *, whole_window: bool = False) -> list[Write]:
    """What the changelog needs for ``key`` moving from ``before`` (as last written) to ``after``
    (None: deleted). ``whole_window``: ``before``'s bodies were never written on their own."""
    out: list[Write] = []
    if before is None or after is None or whole_window or after.window is not before.window:  # else: unchanged
        had = {} if before is None or whole_window else {m.id: m for m in before.window}
        has = {} if after is None else {m.id: m for m in after.window}
        out += [(orjson.dumps(body_key(key, mid)), None) for mid in had if mid not in has]
        out += [(orjson.dumps(body_key(key, mid)), m.to_bytes()) for mid, m in has.items() if had.get(mid) is not m]
    seen = {} if before is None or whole_window else before.observed
    sees = {} if after is None else after.observed
    if sees is not seen:
        out += [(orjson.dumps(f"{OBSERVED}{key}\x00{mid}"), None) for mid in seen if mid not in sees]
        out += [(orjson.dumps(f"{OBSERVED}{key}\x00{mid}"), b"%d" % at) for mid, at in sees.items()
                if seen.get(mid) != at]
    if after is None:
        out.append((orjson.dumps(RECORD + key), None))
    elif before is None or whole_window or after.record is not before.record:  # unchanged: the same object
        out.append((orjson.dumps(RECORD + key), after.record.to_bytes()))
    out.append((orjson.dumps(key), None if after is None else encode_state(after)))
    return out


class Assembler:
    """Changelog records read during one recovery, turned into states when it completes."""

    def __init__(self) -> None:
        self.states: dict[str, tuple[dict[str, Any], list[str], int] | None] = {}  # None: deleted
        self.records: dict[str, dict[str, Any]] = {}
        self.bodies: dict[str, dict[str, ChatMessage]] = {}
        self.observed: dict[str, dict[str, int | None]] = {}  # None: forgotten
        self.full_observed: dict[str, dict[str, int]] = {}
        self.full: set[str] = set()  # keys whose newest state is an older worker's full state

    def apply(self, key: str, partition: int, raw: bytes | None) -> None:
        if key.startswith(BODY):
            owner, _, message_id = key[len(BODY):].partition("\x00")
            if raw is None:
                self.bodies.get(owner, {}).pop(message_id, None)
            else:
                self.bodies.setdefault(owner, {})[message_id] = ChatMessage.from_obj(orjson.loads(raw))
            return
        if key.startswith(OBSERVED):
            owner, _, message_id = key[len(OBSERVED):].partition("\x00")
            self.observed.setdefault(owner, {})[message_id] = None if raw is None else int(raw)
            return
        if key.startswith(RECORD):
            if raw is not None:
                self.records[key[len(RECORD):]] = orjson.loads(raw)
            return
        if raw is None:
            self.states[key] = None
            self.full.discard(key)
            return
        obj = orjson.loads(raw)
        if "window_ids" in obj:
            self.states[key] = (obj["state"], obj["window_ids"], partition)
            self.full.discard(key)
        else:
            state = KeyState.from_obj(obj)
            self.states[key] = (obj, [m.id for m in state.window], partition)
            self.records[key] = obj["record"]
            self.bodies.setdefault(key, {}).update((m.id, m) for m in state.window)
            self.full_observed[key] = dict(state.observed)
            self.full.add(key)

    def finish(self, data: MutableMapping[str, Any], key_partition: MutableMapping[str, int] | None) -> set[str]:
        """Put the assembled states into ``data``; returns the keys recovered from full states."""
        missing = 0
        for key, found in self.states.items():
            if found is None:
                data.pop(key, None)
                if key_partition is not None:
                    key_partition.pop(key, None)
                continue
            obj, ids, partition = found
            current = data.get(key)
            known = {m.id: m for m in current.window} if isinstance(current, KeyState) else {}
            known.update(self.bodies.get(key, {}))
            window = tuple(known[mid] for mid in ids if mid in known)
            missing += len(ids) - len(window)
            record = self.records.get(key) or (current.record if isinstance(current, KeyState) else None)
            if key in self.full:
                observed = self.full_observed[key]
            else:
                observed = dict(current.observed) if isinstance(current, KeyState) else {}
                for mid, at in self.observed.get(key, {}).items():  # in log order: an id's last write counts
                    if at is None:
                        observed.pop(mid, None)
                    else:
                        observed[mid] = at
            data[key] = KeyState.from_obj({**obj, "record": record, "window": window, "observed": observed})
            if key_partition is not None:
                key_partition[key] = partition
        if missing:  # not expected: every body is written in its state's transaction
            log.error("om.recovery.missing_bodies", extra={"messages": missing})
            metrics.failure("missing-window-bodies", missing)
        return self.full


class StateTable(faust.Table):
    """Faust's table with the changelog read as :mod:`streams.state_changelog` writes it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.assembler = Assembler()
        self.unwritten: set[str] = set()

    def apply_changelog_batch(self, batch: Iterable[Any]) -> None:
        for event in batch:
            self.assembler.apply(self._to_key(event.key), event.message.partition, event.message.value)

    async def on_recovery_completed(self, active_tps: Any, standby_tps: Any) -> None:
        assembler, self.assembler = self.assembler, Assembler()  # the next recovery starts afresh
        self.unwritten |= assembler.finish(self.data, getattr(self.data, "_key_partition", None))
        await super().on_recovery_completed(active_tps, standby_tps)

    def writes(self, key: str, before: KeyState | None, after: KeyState | None) -> list[Write]:
        whole = key in self.unwritten
        self.unwritten.discard(key)
        return writes(key, before, after, whole_window=whole)
