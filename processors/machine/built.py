"""Wire models built from values the core already holds validated, without validating them again.

The hottest effects of a step — the status event's inner windows, one observed copy per message
that leaves the window — are made of values read off validated state: the record's ids, the event
time, token counts the step summed, messages from the window. Validating them again was the largest
single cost of a plain message's step (issue 20 item 3). :func:`built` makes the instance validation would make from
the same fields — the same field dict (every field, defaults included, in declaration order) and
the same set fields — minus the checks. Its callers' tests validate what they build again and
compare (tests/unit/machine/test_built_models.py).
"""

from __future__ import annotations

from typing import Any, TypeVar

M = TypeVar("M")

_new = object.__new__
_set = object.__setattr__


def built(model: type[M], fields: dict[str, Any], given: tuple[str, ...]) -> M:
    """``model`` with ``fields`` (every field, each already of its type), ``given`` the fields set:
    what validating a dict of the ``given`` fields builds."""
    instance = _new(model)
    _set(instance, "__dict__", fields)
    _set(instance, "__pydantic_fields_set__", set(given))
    _set(instance, "__pydantic_extra__", None)
    _set(instance, "__pydantic_private__", None)
    return instance
