"""The per-key state the processor folds events into — everything a decision may depend on.

Theory of operation: the state of a lookup key is a pure fold over its events (messages, control
events, worker results). It is checkpointed through a changelog and can be rebuilt by replaying the
log. Nothing outside it (no clock, no process-wide map, no database flag) influences a decision.

What it keeps that Mastra keeps elsewhere:

* ``window`` — the unobserved messages, by id, in event-time order. Mastra re-derives them from the
  cursor (``createdAt > lastObservedAt``), which silently treats a late message as observed (spec
  §12.12). Tracking the window by id means a message leaves it only when an applied observation
  covers it: nothing is lost.
* ``in_flight`` — jobs handed to workers and not yet answered; a result is applied only if its cycle
  is still here (compare-and-set, ARCHITECTURE rule 4).
* ``observed`` — ids already observed, kept for ``LATE_TOLERANCE_MS`` of event time behind the cursor,
  so a producer's retry or a replay of an observed message is recognised as a duplicate.
* ``early_reflection_for`` — the idle period (named by its ``last_activity_at``) in which an idle or
  provider-change trigger already reflected. Mastra judges those triggers once, at the step 0 that
  ends the idle period; here idle ticks re-judge them while it lasts, and without this mark every tick
  would reflect the freshly reflected log again (or retry a failed reflection every few seconds).

States are immutable (frozen models) to everyone outside a step: ``decide`` copies the key's state
once with :func:`replace`, and its step writes its changes into that copy (processors/machine/step.py).
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from processors.machine.built import assemble
from schemas.base import VersionedModel, WireModel
from schemas.lifecycle import AppliedThrough, Trigger
from schemas.messages import ChatMessage
from schemas.record import OMRecord, ThreadMeta

M = TypeVar("M", bound=BaseModel)

LATE_TOLERANCE_MS = 24 * 3_600_000
APPLIED_CYCLES_KEPT = 256

InFlightKind = Literal["buffer", "observe", "reflect-background", "reflect-sync"]


class InFlight(WireModel):
    model_config = ConfigDict(frozen=True)
    cycle_id: str
    kind: InFlightKind
    issued_at: int
    generation: int
    message_ids: tuple[str, ...] = ()
    tokens: int = 0
    line_count: int = 0
    trigger: Trigger | None = None


class Counters(WireModel):
    """What was refused or ignored, so that "dropped and counted" is observable."""

    model_config = ConfigDict(frozen=True)
    stale_results: int = 0
    duplicate_results: int = 0
    duplicate_messages: int = 0
    late_messages_dropped: int = 0


def replace(model: M, changes: dict[str, Any]) -> M:
    """``model.model_copy(update=changes)``, the same object field for field, for the core's hot path.

    A new instance of the same class whose field dict is the old one with ``changes`` applied (not
    validated) and whose changed names count as set. Models with extra or private attributes take
    pydantic's own path; the state's models have neither, and skip its generic copying.
    """
    if model.__pydantic_extra__ is not None or model.__pydantic_private__ is not None:
        return model.model_copy(update=changes)
    fields = model.__dict__.copy()  # a copy in C, then the changes: the order ``{**old, **changes}`` has
    fields.update(changes)
    fields_set = model.__pydantic_fields_set__.copy()
    fields_set.update(changes)
    return assemble(type(model), fields, fields_set)


class TokenMap(dict[str, int]):
    """A window's per-message token counts that also knows the window's total, for the window it was
    made with (``total_for``: that window and :meth:`KeyState.pending_tokens`' answer for it).

    The step that changes a window makes its new map and sets the total it computed on the way, so the
    next event reads it instead of summing the window again (a long window made that sum grow with the
    thread). It is a plain dict to everyone else — equal, serialised and copied as one — and a map read
    back from the changelog is a plain dict: its window is summed once per step until it changes.

    It may also know that its keys are that window's ids in the window's order (``in_order_for``, the
    window): a map made by appending the newest message to a window whose map knew it, or by taking
    messages out of one, keeps that order. A record snapshot then lists the window's ids from the map
    (:meth:`KeyState.window_ids`) instead of reading each message's id through pydantic's attribute hook.
    """

    __slots__ = ("total_for", "in_order_for")  # tuple[tuple[ChatMessage, ...], int] and the window, once set


def in_window_order(tokens: dict[str, int], window: tuple[ChatMessage, ...]) -> bool:
    """Whether ``tokens``' keys are ``window``'s ids in its order, as known (an empty window's empty map's are)."""
    return getattr(tokens, "in_order_for", None) is window or (not window and not tokens)


def flight_of(flights: tuple[InFlight, ...], kind: InFlightKind) -> InFlight | None:
    """The cycle of ``kind`` among ``flights`` (at most one is in flight), or None."""
    for flight in flights:  # a plain loop: asked several times per event, mostly of ()
        if flight.kind == kind:
            return flight
    return None


class KeyState(VersionedModel):
    model_config = ConfigDict(frozen=True)
    kind: Literal["key-state"] = "key-state"
    key: str
    record: OMRecord
    window: tuple[ChatMessage, ...] = ()
    message_tokens: dict[str, int] = Field(default_factory=dict)
    observed: dict[str, int] = Field(default_factory=dict)
    threads: dict[str, ThreadMeta] = Field(default_factory=dict)
    in_flight: tuple[InFlight, ...] = ()
    applied_cycles: tuple[str, ...] = ()
    seq: int = 0
    version: int = 0
    clock: int = Field(default=0, description="max event time seen on messages/control events")
    last_message_at: int | None = Field(default=None, description="last part time, any role")
    last_activity_at: int | None = Field(default=None, description="assistant activity (TTL)")
    last_model: str | None = None
    actor_model: str | None = None
    reflection_suppressed_at: int | None = None
    reflection_buffer_started: bool = False
    early_reflection_for: int | None = Field(
        default=None, description="last_activity_at of the idle period an early reflection acted in"
    )
    applied_through: AppliedThrough | None = None
    step_pending_tokens: int | None = Field(
        default=None, description="pending tokens as the last step left them (Mastra's persisted "
        "pendingMessageTokens, from which an activation sizes its chunk prefix)"
    )
    deferred_step: bool = Field(default=False, description="a step waits for an in-flight cycle's result")
    observer_failures: int = Field(default=0, ge=0, description="Observer results in a row that failed or "
                                   "made no progress (processors/machine/observer_latch.py)")
    observer_latched_until: int | None = Field(default=None, description="event time before which no new "
                                               "Observer cycle starts")
    budget_exceeded_day: str | None = Field(default=None, description="the resource is over its daily token "
                                            "budget (that UTC day): no new model cycle (processors/machine/budget.py)")
    deleted: bool = False
    imported: str | None = Field(default=None, description="import_id of the record-import that seeded the key")
    counters: Counters = Field(default_factory=Counters)

    def flight(self, kind: InFlightKind) -> InFlight | None:
        return flight_of(self.in_flight, kind)

    def find_flight(self, cycle_id: str) -> InFlight | None:
        for flight in self.in_flight:
            if flight.cycle_id == cycle_id:
                return flight
        return None

    def pending_tokens(self) -> int:
        """Tokens of the unobserved window, Mastra's ``countMessages`` (24 + Σ per message).

        Asked several times per event, and summing a long window each time made a message's cost
        grow with the thread: the token map made with this window knows its total (:class:`TokenMap`)."""
        if not self.window:
            return 0
        known = getattr(self.message_tokens, "total_for", None)
        if known is not None and known[0] is self.window:
            return known[1]
        return 24 + sum(self.message_tokens.get(m.id, 0) for m in self.window)

    def window_ids(self) -> list[str]:
        """The window's ids, in its order (its token map's keys when they are known to be them)."""
        if in_window_order(self.message_tokens, self.window):
            return list(self.message_tokens)
        return [m.id for m in self.window]

    def tokens_only_of_window(self) -> bool:
        """Whether every token count is a window message's (its map known to be the window's ids in
        order, or else checked against them)."""
        tokens, window = self.message_tokens, self.window
        return in_window_order(tokens, window) or tokens.keys() <= {m.id for m in window}

    def chunked_ids(self) -> set[str]:
        return {mid for c in self.record.buffered_chunks for mid in c.message_ids}

    def busy_ids(self) -> set[str]:
        """Messages already in a chunk or in an in-flight observation: not candidates again."""
        ids = self.chunked_ids()
        for f in self.in_flight:
            ids.update(f.message_ids)
        return ids

    def unbusy_messages(self) -> list[ChatMessage]:
        """The window's messages not in :meth:`busy_ids`, in its order: a cycle's candidates (matched by
        the ids :meth:`window_ids` lists, not by each message's id read through pydantic's hook)."""
        busy = self.busy_ids()
        return [m for m, mid in zip(self.window, self.window_ids()) if mid not in busy]
