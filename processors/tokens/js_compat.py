"""The few JavaScript semantics that Mastra's numbers depend on, in one place.

Counts must match Mastra's on the same input, and JavaScript differs from Python exactly where it
matters here: ``\\s`` is another character set, ``string.length`` counts UTF-16 code units, and
``Math.round`` rounds halves up instead of to even.
"""

from __future__ import annotations

import math

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
