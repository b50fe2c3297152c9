"""Per-line results remembered by line: observation logs are read again and again, a line at a time.

An Observer call bounds the whole prior log, a Reflector's candidates repeat most of the log they
were given at every compression level, and each answer is checked line by line. What such a check
computes for a line depends on that line alone, so it is remembered by the line's text.

Rules kept here:

* **Only a pure function of one line** may be remembered: the answer never changes, only its cost.
* **Bounded**: up to ``max_chars`` characters of lines, then the memo starts again (a burst of
  recomputation, never unbounded growth in a long-running worker).
* **Safe beside other threads**: a call reads each line's entry once, so a memo emptied meanwhile
  by another caller cannot lose an answer.
* The lines not remembered are computed together (``compute`` takes the list), so a check that is
  cheaper over one joined text keeps that.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

V = TypeVar("V")
MEMO_CHARS = 8_000_000
_ABSENT = object()


class LineMemo(Generic[V]):
    def __init__(self, compute: Callable[[list[str]], list[V]], max_chars: int = MEMO_CHARS) -> None:
        self._compute = compute
        self.max_chars = max_chars
        self._memo: dict[str, V] = {}
        self._chars = 0

    def __call__(self, lines: Sequence[str]) -> list[V]:
        memo = self._memo
        found = {line: memo.get(line, _ABSENT) for line in lines}
        missing = [line for line, value in found.items() if value is _ABSENT]
        if missing:
            fresh = dict(zip(missing, self._compute(missing), strict=True))
            found.update(fresh)
            if self._chars > self.max_chars:
                memo.clear()
                self._chars = 0
            memo.update(fresh)
            self._chars += sum(map(len, missing))
        return [found[line] for line in lines]  # type: ignore[misc]

    def clear(self) -> None:
        self._memo.clear()
        self._chars = 0

    def __len__(self) -> int:
        return len(self._memo)
