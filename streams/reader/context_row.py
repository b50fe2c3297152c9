"""A key's context row as the reader holds it (``om_contexts``, written by the sink), and its head.

The sink writes one row per (resource, lookup key) after each batch; the reader serves ``context()``
and ``status()`` from it. Decoding is lazy: the status and the windows stay JSON until asked for, so
``status()`` never decodes messages and ``context()`` decodes only the threads it shows. A row never
changes once made (a write stamps a new version), so what is derived from it is kept on it.

In the embedded worker a row the sink wrote shares the sink's parse of its window column
(streams/sink/window_parses.py ``shared``): nothing here changes a parsed window or message, a kept
message is then the very dict the row before listed (found by identity before equality), and a new
one may hold JSON fragments where a parse has lists (read through a dump: ``_validated``).
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from schemas.lifecycle import StatusEvent, decode_event
from schemas.messages import ChatMessage
from schemas.record import ThreadMeta
from streams.sink.window_parses import PARSES


@dataclass(frozen=True)
class Head:
    """The head generation of a key, as far as the reader needs it."""

    key: str
    generation: int
    version: int
    active_observations: str
    timezone: str
    threads: dict[str, ThreadMeta]
    last_observed_at: int | None = None


@dataclass(frozen=True)
class ContextRow:
    """One resource's context row of a key (``om_contexts``, written by the sink). The status and
    the windows stay JSON until asked for: ``status()`` never decodes messages, and ``context()``
    decodes only the threads it shows."""

    resource_id: str
    key: str
    head: Head | None
    working_memory: str | None
    status_json: str | None
    windows_json: str
    message_threads: frozenset[str]
    speaking_threads: tuple[str, ...]
    version: int

    @functools.cached_property
    def status(self) -> StatusEvent | None:
        return _status(self.status_json) if self.status_json is not None else None

    @functools.cached_property
    def _windows(self) -> dict[str, list[dict[str, Any]]]:
        shared = PARSES.shared(self.windows_json)  # a column this process's sink wrote: parsed already
        return shared if shared is not None else orjson.loads(self.windows_json)

    @functools.cached_property
    def _decoded(self) -> dict[str, list[ChatMessage]]:
        return {}

    @functools.cached_property
    def _derived(self) -> dict[Any, Any]:
        return {}

    def derived(self, key: Any, compute: Callable[[], Any]) -> Any:
        """What ``compute`` makes of this row alone, computed once per row and ``key`` (a row never
        changes; a cached row serves many reads: resource scope's other conversations, rendered)."""
        if key not in self._derived:
            self._derived[key] = compute()
        return self._derived[key]

    def window(self, thread_id: str) -> list[ChatMessage]:
        """The thread's unobserved messages, oldest first (decoded once per row; a message the row
        this one replaced had decoded, with the same JSON, is that message: :meth:`inherit`)."""
        if thread_id not in self._decoded:
            carried = self.__dict__.get("_carried", {}).pop(thread_id, None)
            self._decoded[thread_id] = _decode_window(self._windows.get(thread_id, []), carried)
        return self._decoded[thread_id]

    def entries(self, thread_id: str) -> list[dict[str, Any]]:
        """The thread's unobserved messages as the row stores them (JSON-ready dicts; a new one's
        parts may be JSON fragments): what :meth:`window` validates, never to be changed."""
        return self._windows.get(thread_id, [])

    def inherit(self, previous: ContextRow) -> None:
        """Take the window messages ``previous`` (the key's row this one replaces) decoded, or had
        taken and not used, for :meth:`window` to reuse. A live key's row changes at every write,
        and its window mostly keeps its messages: validating them again was ~8 µs each at every
        read after a write. Only lists are carried, never rows, so rows do not chain."""
        carried = dict(previous.__dict__.get("_carried", {}))
        decoded = previous.__dict__.get("_decoded")
        if decoded:
            windows = previous._windows
            carried.update((thread, (windows.get(thread, []), messages)) for thread, messages in decoded.items())
        if carried:
            self.__dict__["_carried"] = carried

    def covers(self, message_id: str, observed_at: int | None) -> bool:
        """Whether a context from this row shows the message: listed in a window, or observed at or
        below the head's version (``observed_at``: the covering observation's version)."""
        if observed_at is not None and self.head is not None and observed_at <= self.head.version:
            return True
        return any(m["id"] == message_id for window in self._windows.values() for m in window)


def head_of(key: str, fields: dict[str, Any]) -> Head:
    metas = {tid: ThreadMeta.model_validate(meta) for tid, meta in fields["threads"].items()}
    return Head(key, fields["generation"], fields["version"], fields["active_observations"], fields["timezone"],
                metas, fields["last_observed_at"])


def head_fields(generation: int, version: int, observations: str, timezone: str, threads: str,
                last_observed_at: int | None) -> dict[str, Any]:
    """A head's JSON-ready fields, from its ``om_records`` columns (as selected, or as the sink inserts them)."""
    return {"generation": int(generation), "version": int(version), "active_observations": observations,
            "timezone": timezone, "threads": orjson.loads(threads),
            "last_observed_at": int(last_observed_at) if last_observed_at is not None else None}


def decode_context_row(row: Sequence[Any]) -> ContextRow:
    """A row as selected by :func:`context_rows`, or as the sink inserts it (the same columns)."""
    key, resource, head, working_memory, status, _, _, windows, threads, speaking, version = row
    return ContextRow(
        resource_id=resource, key=key, head=head_of(key, orjson.loads(head)) if head is not None else None,
        working_memory=working_memory, status_json=status, windows_json=windows,
        message_threads=frozenset(threads), speaking_threads=tuple(speaking), version=int(version))


class LastDecoded:
    """The newest row decoded per (key, resource), only for the next row of it to inherit from
    (:meth:`ContextRow.inherit`): the rows the embedded sink hands read-your-writes waits are decoded
    for each wait, outside the cache, and without this each validated its whole window again. Only
    messages whose JSON is the same are taken, so a row kept here is never served and cannot make
    a context stale. Bounded by its rows' window JSON (``max_chars``; decoded, a few times that),
    least recently used out; the reader's loop only."""

    def __init__(self, max_chars: int = 32 << 20) -> None:
        self._max_chars = max_chars
        self._rows: OrderedDict[tuple[str, str], ContextRow] = OrderedDict()
        self._chars = 0

    def decoded(self, raw: Sequence[Any]) -> ContextRow:
        """:func:`decode_context_row` of ``raw``, heir to the key's row decoded before it."""
        row, ident = decode_context_row(raw), (raw[0], raw[1])
        last = self._rows.get(ident)
        if last is not None and last.version >= row.version:
            return row
        if last is not None:
            row.inherit(last)
            self._chars -= len(self._rows.pop(ident).windows_json)
        if len(row.windows_json) <= self._max_chars:
            self._rows[ident] = row
            self._chars += len(row.windows_json)
        while self._chars > self._max_chars:
            self._chars -= len(self._rows.popitem(last=False)[1].windows_json)
        return row


def _decode_window(window: list[dict[str, Any]],
                   carried: tuple[list[dict[str, Any]], list[ChatMessage]] | None) -> list[ChatMessage]:
    """``window``'s messages, those equal to one of ``carried``'s JSON (by id, then the very dict or
    every field) taken from its decoded list: validation is a function of the JSON alone."""
    if not carried:
        return [_validated(m) for m in window]
    known = {raw["id"]: (raw, message) for raw, message in zip(*carried, strict=True)}
    out = []
    for raw in window:
        hit = known.get(raw["id"])
        out.append(hit[1] if hit is not None and (hit[0] is raw or hit[0] == raw) else _validated(raw))
    return out


def _validated(raw: dict[str, Any]) -> ChatMessage:
    """The message of one window entry. The sink's parse keeps a message's parts and metadata as the
    JSON it stored (``orjson.Fragment``, streams/sink/context_appends.py), which only a dump reads."""
    if any(type(value) is orjson.Fragment for value in raw.values()):
        raw = orjson.loads(orjson.dumps(raw))
    return ChatMessage.model_validate(raw)


def _status(payload: str) -> StatusEvent:
    event = decode_event(payload)
    assert isinstance(event, StatusEvent)
    return event
