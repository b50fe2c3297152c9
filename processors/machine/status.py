"""The ``data-om-status`` event a step ends with (spec §6 and §4.2): the windows after the step.

One goes out after every decision; validating its tree of eight models each time was a fifth of a
plain message's cost in the core (issue 20 item 3). So:

* the windows that repeat from one message to the next — the observation window, and the buffered
  chunks' and reflection's figures (which change at a cycle, not at a message) — are validated once
  per distinct value and shared by the events that carry them (a bounded memo by value that forgets
  everything when full: a miss costs one validation);
* the rest — the message window, the tree's three inner nodes and the event — is built from values
  the step read off validated state (ids of the record, event time, token counts it summed), with the
  fields and set fields validation gives them, minus the checks (:mod:`processors.machine.built`).

Rules this module keeps:

* The event is the one validating the whole dict tree builds: the same fields, values and set
  fields, so the same bytes (tests/unit/machine/test_built_models.py validates every event of runs
  again and compares).
* Nothing writes an emitted event (the shell serialises it, the simulation reads it), so sharing
  sub-windows between events is safe.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from processors.machine.built import built
from processors.machine.step import Step
from processors.machine.token_math import projected_message_removal
from schemas.base import SCHEMA_VERSION
from schemas.lifecycle import ActiveWindows, BufferedWindows, StatusEvent, StatusWindows, TokenWindow

_SHARED: dict[tuple[Any, ...], Any] = {}
_SHARED_SIZE = 4096


def _shared(key: tuple[Any, ...], fields: Callable[[tuple[Any, ...]], dict[str, Any]]) -> Any:
    """The one validated model ``key[0]`` for the field values ``key[1:]`` list; ``fields(key)`` gives them
    as the model's dict, asked only on a miss (most events hit)."""
    found = _SHARED.get(key)
    if found is None:
        if len(_SHARED) >= _SHARED_SIZE:
            _SHARED.clear()
        found = _SHARED[key] = key[0].__pydantic_validator__.validate_python(fields(key))
    return found


_WINDOW = frozenset({"tokens", "threshold"})
_ACTIVE = frozenset({"messages", "observations"})
_WINDOWS = frozenset({"active", "buffered"})
_CHUNKS = ("chunks", "message_tokens", "projected_message_removal", "observation_tokens", "status")
_REFLECTION = ("input_observation_tokens", "observation_tokens", "status")
_EVENT = frozenset({"key", "thread_id", "resource_id", "record_id", "at", "windows", "generation", "applied_through"})


def _buffered_fields(shape: tuple[Any, ...]) -> dict[str, Any]:
    return {"observations": dict(zip(_CHUNKS, shape[1:6])), "reflection": dict(zip(_REFLECTION, shape[6:]))}


def _window_fields(log: tuple[Any, ...]) -> dict[str, Any]:
    return {"tokens": log[1], "threshold": log[2]}


def status_event(step: Step) -> StatusEvent:
    """The windows after this step.

    The state's and the record's fields are read from their field dicts: some fifteen reads an event,
    each through pydantic's ``__getattr__`` hook as attributes (~5 times a plain object's read)."""
    state = step.state.__dict__
    record = state["record"].__dict__
    pending = step.pending()
    figures = step.figures()
    chunks = len(figures.chunk_message_tokens)
    ratio = step.resolved.activation_ratio
    projected = 0 if not chunks or ratio is None else \
        projected_message_removal(figures.chunk_message_tokens, pending, figures.message_threshold, ratio)
    buffering = reflecting = False
    for flight in state["in_flight"]:
        buffering = buffering or flight.kind == "buffer"
        reflecting = reflecting or flight.kind == "reflect-background"
    chunk_tokens = min(figures.chunk_message_total, pending)
    chunk_status = "running" if buffering else ("complete" if chunks else "idle")
    reflection_status = "running" if reflecting else ("complete" if record["buffered_reflection"] else "idle")
    shape = (BufferedWindows, chunks, chunk_tokens, projected, figures.chunk_observation_total, chunk_status,
             record["buffered_reflection_input_tokens"], record["buffered_reflection_tokens"], reflection_status)
    buffered = _shared(shape, _buffered_fields)
    observations = _shared((TokenWindow, record["observation_token_count"], figures.reflection_threshold),
                           _window_fields)
    messages = built(TokenWindow, {"tokens": pending, "threshold": figures.message_threshold}, _WINDOW)
    active = built(ActiveWindows, {"messages": messages, "observations": observations}, _ACTIVE)
    windows = built(StatusWindows, {"active": active, "buffered": buffered}, _WINDOWS)
    return built(StatusEvent, {
        "schema_version": SCHEMA_VERSION, "key": record["key"], "thread_id": record["thread_id"],
        "resource_id": record["resource_id"], "record_id": record["id"], "at": step.now, "type": "status",
        "windows": windows, "generation": record["generation"], "step_number": None,
        "applied_through": state["applied_through"],
    }, _EVENT)
