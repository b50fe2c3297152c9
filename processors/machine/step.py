"""One application of one event: the working copy of a key's state and the effects it produces.

``decide`` is pure from the outside; inside, a :class:`Step` is the scratchpad the rules write to,
so that the small rule modules (intake, planning, results) share one vocabulary instead of threading
five return values through every function. A Step never outlives its ``decide`` call.

Its ``state`` is its own: ``decide`` copies the key's state once when the step begins, and
:meth:`Step.update` writes into that copy instead of building a new frozen state per change (the
state is still frozen to everyone else: nothing outside the step holds the copy until ``decide``
returns it, and nothing writes it after). The rules may keep a state's *parts* across an update
(its record, window, maps): those are never written in place, only replaced.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from typing import Any

from processors.config import OMConfig
from processors.machine.record_figures import RecordFigures, record_figures
from processors.machine.state import (
    LATE_TOLERANCE_MS, InFlight, InFlightKind, KeyState, TokenMap, flight_of, in_window_order, replace,
)
from processors.tokens import TokenCounter
from schemas.deltas import Delta
from schemas.jobs import ObserveJob, ReflectJob
from schemas.messages import ChatMessage

_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


class Step:
    __slots__ = ("state", "config", "resolved", "counter", "now", "jobs", "events", "deltas", "inserted", "frozen",
                 "dropped", "record_changed", "_fields", "_fields_set", "_figures", "_pending")

    def __init__(self, state: KeyState, config: OMConfig, counter: TokenCounter, now: int) -> None:
        self.state = state
        self.config = config
        self.resolved = config.resolved  # read several times per event
        self.counter = counter
        self.now = now
        self.jobs: list[ObserveJob | ReflectJob] = []
        self.events: list[Any] = []
        self.deltas: list[Delta] = []
        self.inserted: list[ChatMessage] = []  # the core's own messages (to materialise)
        self.frozen: list[ChatMessage] = []  # observed as they are now (their row is final)
        self.dropped: list[str] = []  # ids taken nowhere (late): the stored row is to hide
        self.record_changed = False
        self._fields = state.__dict__  # the copy's field dict and set fields, which :meth:`write` changes
        self._fields_set = state.__pydantic_fields_set__
        self._figures: RecordFigures | None = None  # of the record now; None once a write replaced it
        self._pending: int | None = None  # of the window and token map now; None once a write replaced either

    # --- state updates -------------------------------------------------------------------------
    def update(self, **changes: Any) -> None:
        self.write(changes)

    def write(self, changes: dict[str, Any]) -> None:
        """:meth:`update` with the changes in a dict of the caller's (which it may not reuse).

        Every change of the step's state passes here, so here the figures and the pending count the
        step remembers are forgotten when what they are computed from is replaced (they were asked
        ~12 times an event, each asking the state whether its record, window or map was still the same:
        a model's attribute read costs ~5 times a plain object's, through pydantic's ``__getattr__`` hook)."""
        self._fields.update(changes)
        self._fields_set.update(changes)
        if "record" in changes:
            self._figures = None
        if "window" in changes or "message_tokens" in changes:
            self._pending = None

    def update_record(self, **changes: Any) -> None:
        changes.setdefault("updated_at", self.now)
        self.update(record=replace(self.state.record, changes))
        self.record_changed = True

    def count(self, **deltas: int) -> None:
        counters = self.state.counters
        self.update(
            counters=replace(counters, {k: getattr(counters, k) + v for k, v in deltas.items()})
        )

    def add_flight(self, flight: InFlight) -> None:
        self.update(in_flight=self.state.in_flight + (flight,))

    def end_flight(self, cycle_id: str) -> None:
        kept = tuple(f for f in self.state.in_flight if f.cycle_id != cycle_id)
        applied = (self.state.applied_cycles + (cycle_id,))[-256:]
        self.update(in_flight=kept, applied_cycles=applied)

    def set_window(self, window: tuple[ChatMessage, ...], tokens: TokenMap, pending: int,
                   changes: dict[str, Any], *, in_order: bool = False) -> None:
        """A new window and its new token map, whose total ``pending`` the caller knows (kept on the map
        for later steps, and here for this one), written with the further ``changes`` (the caller's dict,
        which it may not reuse); ``in_order`` when the caller knows the map's keys are the window's ids in
        its order (:class:`TokenMap`)."""
        if not window:
            pending = 0
        tokens.total_for = (window, pending)
        tokens.in_order_for = window if in_order else None
        changes["window"] = window
        changes["message_tokens"] = tokens
        self.write(changes)
        self._pending = pending

    def remove_from_window(self, *groups: Collection[str]) -> list[list[ChatMessage]]:
        """Take observed messages out of the window in one pass, one list per group of ids (in window
        order; a message in two groups counts to the first); remember them as observed (by id)."""
        state = self.state
        owner: dict[str, int] = {}
        for index, ids in enumerate(groups):
            for mid in ids:
                owner.setdefault(mid, index)
        removed: list[list[ChatMessage]] = [[] for _ in groups]
        removed_ids: list[list[str]] = [[] for _ in groups]
        kept: list[ChatMessage] = []
        for m, mid in zip(state.window, state.window_ids()):  # ids as the token map lists them
            index = owner.get(mid)
            if index is None:
                kept.append(m)
            else:
                removed[index].append(m)
                removed_ids[index].append(mid)
        if len(kept) == len(state.window):
            return removed
        gone = [mid for ids in removed_ids for mid in ids]
        observed = dict(state.observed)
        observed.update(zip(gone, [m.created_at for group in removed for m in group]))
        cursor = state.record.last_observed_at
        if cursor is not None:  # beyond the tolerance a duplicate is recognised by its age alone
            horizon = cursor - LATE_TOLERANCE_MS
            if min(observed.values()) <= horizon:  # rebuilt only when something is to go
                observed = {mid: at for mid, at in observed.items() if at > horizon}
        before = self.pending()
        old_tokens = state.message_tokens
        tokens = TokenMap(old_tokens)  # a copy in C, then one pop per id, order kept
        for mid in gone:
            tokens.pop(mid, None)
        self.set_window(tuple(kept), tokens, before - sum(old_tokens.get(mid, 0) for mid in gone), {"observed": observed},
                        in_order=in_window_order(old_tokens, state.window))
        for group in removed:
            self.frozen.extend(group)
        return removed

    # --- derived values ------------------------------------------------------------------------
    def flight(self, kind: InFlightKind) -> InFlight | None:
        """:meth:`KeyState.flight` of the state now, asked ~5 times a step: read from its field dict (a
        method and a field of a model are each read through pydantic's ``__getattr__`` hook)."""
        return flight_of(self._fields["in_flight"], kind)

    def next_cycle_id(self, prefix: str) -> str:
        """A deterministic cycle id (Mastra's shapes, e.g. ``buffer-obs-<ms>-<9 base36>``).

        Derived from the key and a per-key sequence, so replaying the log yields the same ids and a
        re-issued job is recognisably the same cycle.
        """
        seq = self.state.seq + 1
        self.update(seq=seq)
        digest = int.from_bytes(
            hashlib.sha256(f"{self.state.key}:{seq}".encode()).digest()[:8], "big"
        )
        tail = ""
        for _ in range(9):
            digest, rem = divmod(digest, 36)
            tail += _BASE36[rem]
        return f"{prefix}-{self.now}-{tail}"

    def message_threshold(self) -> int:
        """The observation threshold now (dynamic under share_token_budget; overrides applied)."""
        return self.figures().message_threshold

    def reflection_threshold(self) -> int:
        return self.figures().reflection_threshold

    def figures(self) -> RecordFigures:
        """The thresholds and chunk totals of the record now (:mod:`processors.machine.record_figures`)."""
        figures = self._figures
        if figures is None:
            figures = self._figures = record_figures(self.state.record, self.config)
        return figures

    def pending(self) -> int:
        """Tokens of the unobserved window now (known to its token map: :meth:`KeyState.pending_tokens`,
        and remembered here until a write replaces the window or its token map)."""
        pending = self._pending
        if pending is None:
            pending = self._pending = self.state.pending_tokens()
        return pending

    def message_tokens(self, messages: list[ChatMessage]) -> int:
        """Mastra's ``countMessages`` over a subset of the window, from the per-message cache."""
        if not messages:
            return 0
        cache = self.state.message_tokens
        return 24 + sum(cache.get(m.id, 0) for m in messages)

    def job_header(self, cycle_id: str) -> dict[str, Any]:
        record = self.state.record
        return {
            "cycle_id": cycle_id,
            "key": record.key,
            "scope": record.scope,
            "thread_id": record.thread_id,
            "resource_id": record.resource_id,
            "record_id": record.id,
            "generation": record.generation,
            "issued_at": self.now,
        }
