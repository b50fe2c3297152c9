"""The few JavaScript semantics that Mastra's numbers and texts depend on, in one place.

Counts and rendered texts must match Mastra's on the same input, and JavaScript differs from Python
exactly where it matters here: ``\\s`` is another character set, ``string.length`` counts UTF-16
code units (so a cut at N characters is a cut at N units, never inside a surrogate pair, as
Mastra's ``safeSlice``), ``Math.round`` rounds halves up instead of to even, ``String(number)``
prints ``1e-7`` and ``0.00001`` where Python prints ``1e-07`` and ``1e-05``, and
``JSON.stringify`` lists integer-like keys first, ascending, and prints non-finite numbers as
``null``.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

# JavaScript's ``\s``: Python's also matches \x1c-\x1f and \x85, and misses U+FEFF.
JS_WHITESPACE = (
    "\t\n\x0b\x0c\r \xa0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def js_round(value: float) -> int:
    """``Math.round``: halves go up (2.5 -> 3, -2.5 -> -2)."""
    return math.floor(value + 0.5)


def utf16_length(text: str) -> int:
    """``string.length``: characters beyond the BMP count twice."""
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def utf16_prefix(text: str, units: int) -> str:
    """``safeSlice(text, units)``: the first ``units`` UTF-16 units, one less if that would split a pair."""
    if units <= 0:
        return ""
    if text.isascii():
        return text[:units]
    used = 0
    for index, char in enumerate(text):
        used += 2 if ord(char) > 0xFFFF else 1
        if used > units:
            return text[:index]
    return text


def js_number(value: int | float) -> str:
    """``String(n)``: integers plainly below 1e21, exponents as ``1e+21`` / ``1e-7``, else the shortest round trip."""
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        if value == 0:
            return "-0" if math.copysign(1.0, value) < 0 else "0"
    magnitude = abs(value)
    if isinstance(value, int) and magnitude >= 1e21:
        value = float(value)
    if magnitude >= 1e21 or (isinstance(value, float) and magnitude < 1e-6):
        mantissa, exponent = f"{value!r}".split("e") if "e" in repr(value) else (repr(value), "0")
        return f"{mantissa.removesuffix('.0')}e{'+' if int(exponent) >= 0 else '-'}{abs(int(exponent))}"
    if isinstance(value, int) or value.is_integer():
        return str(int(value))
    return format(Decimal(repr(value)), "f")


def js_json(value: Any, indent: int = 2) -> str:
    """``JSON.stringify(value, null, indent)`` for JSON-shaped values (anything else as its ``str``);
    ``indent=0`` is ``JSON.stringify(value)``, with no spaces at all."""
    return _json(value, "", " " * indent)


def _json(value: Any, outer: str, step: str) -> str:
    if value is None or value is True or value is False:
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, (int, float)):
        return js_number(value) if math.isfinite(value) else "null"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    inner = outer + step
    if isinstance(value, dict):
        if not value:
            return "{}"
        colon = ": " if step else ":"
        items = [f"{json.dumps(str(k), ensure_ascii=False)}{colon}{_json(v, inner, step)}" for k, v in _js_key_order(value)]
        return _wrap("{", items, "}", outer, inner, step)
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        return _wrap("[", [_json(v, inner, step) for v in value], "]", outer, inner, step)
    return json.dumps(str(value), ensure_ascii=False)


def _wrap(opening: str, items: list[str], closing: str, outer: str, inner: str, step: str) -> str:
    if not step:
        return opening + ",".join(items) + closing
    return opening + "\n" + ",\n".join(inner + item for item in items) + "\n" + outer + closing


def _js_key_order(value: dict) -> list[tuple[Any, Any]]:
    """JavaScript's own-key order: array-index keys ascending, then the others as inserted."""
    indices = sorted((k for k in value if is_array_index(k)), key=lambda k: int(k))
    return [(k, value[k]) for k in indices] + [(k, v) for k, v in value.items() if not is_array_index(k)]


def is_array_index(key: Any) -> bool:
    """Whether JavaScript treats an object key as an array index (``"0"``, ``"17"``; not ``"01"``)."""
    text = str(key)
    return text.isdigit() and text.isascii() and (text == "0" or text[0] != "0") and int(text) < 2**32 - 1



def js_string(value: Any) -> str:
    """``String(value ?? "")`` for JSON values: arrays joined by commas, objects as ``[object Object]``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return js_number(value)
    if isinstance(value, (list, tuple)):
        return ",".join(js_string(item) for item in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)
