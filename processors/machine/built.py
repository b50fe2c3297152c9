"""Wire models built from values the core already holds validated, without validating them again.

The hottest effects of a step — the status event's inner windows, one observed copy per message
that leaves the window — are made of values read off validated state: the record's ids, the event
time, token counts the step summed, messages from the window. Validating them again was the largest
single cost of a plain message's step (issue 20 item 3). :func:`built` makes the instance validation would make from
the same fields — the same field dict (every field, defaults included, in declaration order) and
the same set fields — minus the checks. Its callers' tests validate what they build again and
compare (tests/unit/machine/test_built_models.py).

:func:`assemble` is the one place such an instance is put together (``built`` here, and the state's
copies, :func:`processors.machine.state.replace`): a pydantic model keeps its fields in four slots,
set through their own descriptors (``object.__setattr__`` finds the same descriptor by name first,
at twice the cost).
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M")

_new = object.__new__
_slots = vars(BaseModel)
_set_dict = _slots["__dict__"].__set__
_set_fields_set = _slots["__pydantic_fields_set__"].__set__
_set_extra = _slots["__pydantic_extra__"].__set__
_set_private = _slots["__pydantic_private__"].__set__


def assemble(model: type[M], fields: dict[str, Any], fields_set: set[str]) -> M:
    """An instance of ``model`` (no extra or private attributes) holding ``fields`` and ``fields_set``
    as they are (not copied)."""
    instance = _new(model)
    _set_dict(instance, fields)
    _set_fields_set(instance, fields_set)
    _set_extra(instance, None)
    _set_private(instance, None)
    return instance


def built(model: type[M], fields: dict[str, Any], given: frozenset[str]) -> M:
    """``model`` with ``fields`` (every field, each already of its type), ``given`` the fields set:
    what validating a dict of the ``given`` fields builds. A frozenset, copied into each instance's own
    set: half the cost of a set made from a tuple (its hashes are copied, not computed)."""
    return assemble(model, fields, set(given))
