"""The OM state machine: ``decide(state, event, config) -> Decision``.

Theory of operation (read this before the rule modules):

* The processor keeps one :class:`KeyState` per lookup key and feeds it every event for that key,
  in log order: chat messages, control events and worker results. ``decide`` returns the next state
  and the effects — jobs for the LLM workers, lifecycle events, materialisation deltas — and the
  shell only delivers them. Nothing here reads a clock, a broker, a database or a model; time
  arrives on events (a result carries no usable event time, so it is applied at the key's clock).
* Everything that affects transitions lives in this package: intake (:mod:`processors.machine.intake`),
  planning (:mod:`processors.machine.planning`), buffering, activation, observation and reflection.
* Worker results are compare-and-set: applied only while their cycle is in flight; otherwise they
  are counted as duplicate (already applied) or stale (abandoned / superseded) and dropped.
* A message's stored row follows the messages topic while it is unobserved. When it leaves the
  window it is emitted once more, as observed (``MessageInserted.observed``): that row outranks the
  topic's, so a re-send of the id — a duplicate here — never replaces what the memory was built from.
* Invalid input raises :class:`Rejected` inside; ``decide`` turns it into ``Decision.rejection``
  with the state unchanged, so one bad record never stops the partition.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from processors.machine.budget import apply_budget
from processors.machine.built import built
from processors.machine.buffering import apply_buffer_result, maybe_buffer
from processors.config import OMConfig
from processors.machine.generation import record_id
from processors.machine.intake import Rejected, check_control_ownership, take_message
from processors.machine.lookup import lookup_key
from processors.config import deep_merge
from processors.machine.observation import apply_observation_result
from processors.machine.observer_latch import lift_latch, note_observer_outcome, progress_mark
from processors.machine.planning import plan
from processors.machine.record_import import apply_import
from processors.machine.reflection import apply_reflection_result, maybe_reflect
from processors.machine.state import KeyState, replace
from processors.machine.status import status_event
from processors.machine.step import Step
from processors.machine.steps import step_of
from processors.tokens import TokenCounter, get_counter
from schemas.control import (
    BudgetChange,
    ConfigOverride,
    ControlEvent,
    IdleTick,
    ProviderChange,
    RecordImport,
    ThreadControl,
    ThreadDeleted,
    TurnEnd,
    TurnStart,
)
from schemas.base import SCHEMA_VERSION
from schemas.deltas import Delta, KeyDeleted, MessageInserted, RecordSnapshot
from schemas.jobs import ObserveJob, ObserveResult, ReflectJob, ReflectResult
from schemas.lifecycle import LifecycleEvent
from schemas.messages import ChatMessage
from schemas.record import OMRecord

Event = ChatMessage | ControlEvent | ObserveResult | ReflectResult


@dataclass(frozen=True)
class Rejection:
    field: str
    reason: str


class Decision(NamedTuple):
    """What one event decided; immutable (a named tuple: built once per event, it costs a fifth of a
    frozen dataclass)."""

    state: KeyState | None
    jobs: tuple[ObserveJob | ReflectJob, ...] = ()
    events: tuple[LifecycleEvent, ...] = ()
    deltas: tuple[Delta, ...] = ()
    rejection: Rejection | None = None
    dropped: tuple[str, ...] = ()  # message ids the core took nowhere (late): their stored rows are to hide


_inserted = MessageInserted.__pydantic_validator__.validate_python  # MessageInserted(**fields), minus its wrapper
_OBSERVED_COPY = frozenset({"key", "version", "at", "message", "observed"})  # the fields an observed copy sets
_SNAPSHOT = frozenset({"key", "version", "at", "record", "threads", "pending_message_tokens", "unobserved_message_ids"})


@lru_cache(maxsize=32)
def _counter(name: str) -> TokenCounter:
    return get_counter(name)


def counter_for(config: OMConfig) -> TokenCounter:
    return _counter(config.token_counter)


_KEYED = (ObserveResult, ReflectResult, IdleTick, RecordImport, BudgetChange)  # events that name their key


def event_key(event: Event, config: OMConfig) -> str:
    """The lookup key an event belongs to — the Kafka key the shell must produce it with."""
    if type(event) is not ChatMessage and isinstance(event, _KEYED):  # a message, the common event, skips
        return event.key  # five checks against model classes (~80 ns each: their metaclass is an ABC's)
    return lookup_key(config.scope, event.thread_id, event.resource_id)


def new_state(key: str, event: ChatMessage | ControlEvent, config: OMConfig) -> KeyState:
    thread_id = getattr(event, "thread_id", None)
    resource_id = getattr(event, "resource_id", None) or thread_id or key.split(":", 1)[1]
    at = getattr(event, "created_at", None) or getattr(event, "at", 0)
    record = OMRecord(
        id=record_id(key, 0),
        key=key,
        scope=config.scope,
        thread_id=thread_id if config.scope == "thread" else None,
        resource_id=resource_id,
        observed_timezone=config.timezone,
        created_at=at,
        updated_at=at,
    )
    return KeyState(key=key, record=record, clock=at)


def decide(state: KeyState | None, event: Event, config: OMConfig) -> Decision:
    if state is None:
        if not isinstance(event, (ChatMessage, TurnStart, TurnEnd, ProviderChange, ConfigOverride, RecordImport)):
            return Decision(state=None)
        state = new_state(event_key(event, config), event, config)
        fresh = True
    else:
        fresh = False
    now = _event_time(event, state)
    step = Step(state=replace(state, {"version": state.version + 1}), config=config,
                counter=counter_for(config), now=now)
    try:
        if not fresh and type(event) is not ChatMessage and isinstance(event, ThreadControl):
            check_control_ownership(step, event)
        if _apply(step, event) is None:
            return Decision(state=None, deltas=(_deleted(step),))
    except Rejected as exc:
        return Decision(state=None if fresh else state, rejection=Rejection(exc.field, exc.reason))
    if step.inserted or step.frozen:
        _message_deltas(step)
    if step.record_changed:
        step.deltas.append(_snapshot(step))
    step.events.append(status_event(step))
    return Decision(step.state, tuple(step.jobs), tuple(step.events), tuple(step.deltas), dropped=tuple(step.dropped))


def _message_deltas(step: Step) -> None:
    """The rows of the core's own messages, then of the messages observed (final)."""
    key, version, now = step.state.key, step.state.version, step.now
    step.deltas.extend(_inserted({"key": key, "version": version, "at": now, "message": m}) for m in step.inserted)
    # one per observed message (an activation's ~130), the hottest delta: built from the window's messages,
    # each with a copy (in C) of one field dict whose message is then set
    fields = {"schema_version": SCHEMA_VERSION, "kind": "message-inserted", "key": key, "version": version,
              "at": now, "message": None, "observed": True}
    for m in step.frozen:
        copy = fields.copy()
        copy["message"] = m
        step.deltas.append(built(MessageInserted, copy, _OBSERVED_COPY))


def _event_time(event: Event, state: KeyState) -> int:
    if isinstance(event, ChatMessage):
        return max(state.clock, event.created_at)
    if isinstance(event, (ObserveResult, ReflectResult, BudgetChange)):
        return state.clock
    return max(state.clock, event.at)


def _apply(step: Step, event: Event) -> KeyState | None:
    """Dispatch on the event type; returns None when the key's state is to be deleted."""
    if isinstance(event, ChatMessage):
        kind = step_of(event)
        if take_message(step, event) and kind is not None:
            plan(step, step_zero=kind == "step-zero")
    elif isinstance(event, (ObserveResult, ReflectResult)):
        _apply_result(step, event)
    elif isinstance(event, ThreadDeleted):
        return None
    elif isinstance(event, BudgetChange):
        if apply_budget(step, event):
            plan(step, step_zero=True)
    else:
        _apply_control(step, event)
    return step.state


def _apply_result(step: Step, result: ObserveResult | ReflectResult) -> None:
    flight = step.state.find_flight(result.cycle_id)
    if flight is None:
        duplicate = result.cycle_id in step.state.applied_cycles
        step.count(**{"duplicate_results" if duplicate else "stale_results": 1})
        return
    if isinstance(result, ReflectResult):
        apply_reflection_result(step, flight, result)
    else:
        before = progress_mark(step)
        if flight.kind == "buffer":
            apply_buffer_result(step, flight, result)
        elif apply_observation_result(step, flight, result):
            maybe_reflect(step)
        note_observer_outcome(step, flight, result, before)
    if step.state.deferred_step:
        step.update(deferred_step=False)
        plan(step)


def _apply_control(step: Step, event: ControlEvent) -> None:
    step.update(clock=max(step.state.clock, event.at))
    if isinstance(event, (TurnStart, ProviderChange)):
        step.update(actor_model=event.model)
        plan(step, step_zero=True)
    elif isinstance(event, TurnEnd):
        if step.config.observation.buffer_on_idle and not step.config.read_only:
            maybe_buffer(step, on_idle=True)
    elif isinstance(event, IdleTick):
        plan(step, step_zero=True)
    elif isinstance(event, ConfigOverride):
        merged = deep_merge(step.state.record.config_overrides, event.config)
        step.update_record(config_overrides=merged)
        lift_latch(step)
        plan(step)
    elif isinstance(event, RecordImport):
        apply_import(step, event)


def _deleted(step: Step) -> KeyDeleted:
    record = step.state.record
    return KeyDeleted(key=record.key, version=step.state.version, at=step.now,
                      thread_id=record.thread_id, resource_id=record.resource_id)


def _snapshot(step: Step) -> RecordSnapshot:
    """Built from the state's validated parts (a copy of its thread map, its window's ids), as validation
    would build it: one per record change, it cost 15 us validated (mostly checking the window's ids)."""
    state = step.state
    return built(RecordSnapshot, {
        "schema_version": SCHEMA_VERSION, "kind": "record-snapshot", "key": state.key, "version": state.version,
        "at": step.now, "record": state.record, "threads": dict(state.threads),
        "pending_message_tokens": step.pending(), "unobserved_message_ids": state.window_ids(),
    }, _SNAPSHOT)
