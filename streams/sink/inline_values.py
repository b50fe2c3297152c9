"""Which values a JSON insert stores exactly as clickhouse-connect's Native insert would.

ClickHouse reads JSON input leniently where the Native insert refuses: an integer too large for its
column wraps around (2^40 into a UInt32 stores 0), a number goes into a String column as text, a
float's NaN is written by orjson as null. The inline insert (:mod:`streams.sink.inserts`) therefore
takes only rows whose every value has the Python type its column expects and fits it; any other row
sends the whole insert the Native way, which stays the definition: what it stores, or refuses (and
the sink dead-letters), is what happens. Rules this file keeps:

* **A check per column type, built once** from the type's name as ``system.columns`` spells it.
  Types it does not know (UUID, Float32, …) have no check: their tables go the Native way.
* **Strict, never lenient.** A check may turn away a value JSON would carry fine (a ``bool`` for a
  UInt8, a ``tuple`` for an Array): that costs the Native way's speed, never a different row.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

Check = Callable[[Any], bool]

_INTEGER = re.compile(r"(U?)Int(8|16|32|64)")
_EXACT_FLOAT_INT = 1 << 53  # an int JSON writes as digits that a Float64 holds exactly


def row_check(types: Sequence[str]) -> Callable[[Sequence[Any]], bool] | None:
    """A check of whole rows for columns of ``types``, or None when a type has no check."""
    checks = [column_check(name) for name in types]
    if any(check is None for check in checks):
        return None
    width = len(checks)
    return lambda row: len(row) == width and all(check(value) for check, value in zip(checks, row))  # type: ignore[misc]


def column_check(name: str) -> Check | None:
    """Whether a value for a column of type ``name`` is stored exactly when written as JSON."""
    if name.startswith("Nullable(") and (inner := column_check(name[len("Nullable("):-1])) is not None:
        return lambda value: value is None or inner(value)
    if name.startswith("LowCardinality("):
        return column_check(name[len("LowCardinality("):-1])
    if name.startswith("Array(") and (inner := column_check(name[len("Array("):-1])) is not None:
        return lambda value: type(value) is list and all(map(inner, value))
    if name == "Map(String, String)":
        return lambda value: type(value) is dict and all(type(k) is str and type(v) is str for k, v in value.items())
    if name == "String":
        return lambda value: type(value) is str
    if name == "Float64":
        return lambda value: ((type(value) is float and math.isfinite(value))
                              or (type(value) is int and -_EXACT_FLOAT_INT <= value <= _EXACT_FLOAT_INT))
    if match := _INTEGER.fullmatch(name):
        bits = int(match.group(2))
        low, high = (0, (1 << bits) - 1) if match.group(1) else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
        return lambda value: type(value) is int and low <= value <= high
    return None
