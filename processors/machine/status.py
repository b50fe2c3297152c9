"""The ``data-om-status`` event a step ends with (spec §6 and §4.2): the windows after the step.

One goes out after every decision, and from one message to the next most of its windows repeat:
the observation window, the buffered reflection and, between cycles, the buffered chunks' figures.
Validating the whole tree each time was a fifth of a plain message's cost in the core (issue 20
item 3), so each sub-window is one validated instance per distinct value, shared by the events that
carry it, and a step validates only the top of the tree with the windows that changed.

Rules this module keeps:

* The event is the one validating the whole dict tree builds: the same values, the same bytes.
* A shared sub-window is never written: nothing writes an emitted event (the shell serialises it,
  the simulation reads it). The memo is bounded and forgets everything when full (a miss only costs
  one validation).
"""

from __future__ import annotations

from typing import Any

from processors.machine.lifecycle_events import identity
from processors.machine.step import Step
from processors.machine.token_math import projected_message_removal
from schemas.lifecycle import BufferedObservationsWindow, BufferedReflectionWindow, StatusEvent, TokenWindow

_validate_status = StatusEvent.__pydantic_validator__.validate_python  # model_validate without its wrapper
_SHARED: dict[tuple[Any, ...], Any] = {}
_SHARED_SIZE = 4096


def _shared(model: type, *values: Any) -> Any:
    """The one ``model`` instance with these field values (in field order)."""
    key = (model, *values)
    found = _SHARED.get(key)
    if found is None:
        if len(_SHARED) >= _SHARED_SIZE:
            _SHARED.clear()
        found = _SHARED[key] = model.__pydantic_validator__.validate_python(dict(zip(model.model_fields, values)))
    return found


def status_event(step: Step) -> StatusEvent:
    """The windows after this step."""
    state = step.state
    record = state.record
    pending = step.pending()
    figures = step.figures()
    chunks = len(figures.chunk_message_tokens)
    if chunks:
        ratio = step.resolved.activation_ratio
        projected = 0 if ratio is None else \
            projected_message_removal(figures.chunk_message_tokens, pending, figures.message_threshold, ratio)
    else:
        projected = 0
    buffering = reflecting = False
    for flight in state.in_flight:
        buffering = buffering or flight.kind == "buffer"
        reflecting = reflecting or flight.kind == "reflect-background"
    buffered = {
        "observations": _shared(BufferedObservationsWindow, chunks, min(figures.chunk_message_total, pending), projected,
                                figures.chunk_observation_total,
                                "running" if buffering else ("complete" if chunks else "idle")),
        "reflection": _shared(BufferedReflectionWindow, record.buffered_reflection_input_tokens,
                              record.buffered_reflection_tokens,
                              "running" if reflecting else ("complete" if record.buffered_reflection else "idle")),
    }
    active = {
        "messages": {"tokens": pending, "threshold": figures.message_threshold},
        "observations": _shared(TokenWindow, record.observation_token_count, figures.reflection_threshold),
    }
    return _validate_status({
        **identity(step),
        "windows": {"active": active, "buffered": buffered},
        "generation": record.generation,
        "applied_through": state.applied_through,
    })
