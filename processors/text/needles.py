"""Words a pattern cannot match without: a string search for them before the pattern's scan.

Rules kept here:

* A pattern's *needles* are words every one of its matches holds one of. A text without any of
  them cannot match, and finding that out costs string searches (a few µs for a kilobyte), not a
  regex scan (~30 µs for a kilobyte of prose under IGNORECASE, the engine trying each place).
  Where a needle is found the pattern is scanned as before: the answer never changes.
* Under IGNORECASE a pattern's ASCII letter matches its capital and four other characters: İ and
  ı (i), ſ (s), K (k). The text is searched folded: those four to their letters, then ``lower()``
  (İ's ``lower()`` is two characters). Needles are lower-case ASCII.
  tests/unit/test_needles.py checks every code point, and each pattern's needles on generated text.
"""

from __future__ import annotations

import re

_TO_ASCII = {0x130: "i", 0x131: "i", 0x17F: "s", 0x212A: "k"}
_LITERAL = re.compile(r"[^\\()\[\].^$|?*+{]*")  # up to the first character that is not itself


def folded(text: str) -> str:
    """``text`` as IGNORECASE compares it with lower-case ASCII letters."""
    if not text.isascii() and any(ch in text for ch in "\u0130\u0131\u017f\u212a"):
        text = text.translate(_TO_ASCII)
    return text.lower()


def may_match(text: str, needles: tuple[str, ...]) -> bool:
    """False only when ``text`` holds none of ``needles``, folded as IGNORECASE folds it."""
    lower = folded(text)
    return any(needle in lower for needle in needles)


def literal_starts(*alternatives: str) -> tuple[str, ...]:
    """Needles of a pattern's alternatives: each one's literal start, lower-cased ("cancell?ed" ->
    "cancel", ``switch\\w*`` -> "switch"); an alternative with none is refused."""
    starts = []
    for alternative in alternatives:
        literal = _LITERAL.match(alternative)[0]
        if alternative[len(literal) : len(literal) + 1] in ("?", "*", "{"):
            literal = literal[:-1]  # the character before a quantifier may be absent
        if not literal:
            raise ValueError(f"{alternative!r} has no literal start")
        starts.append(literal.lower())
    return tuple(starts)
