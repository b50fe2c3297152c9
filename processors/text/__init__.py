"""Helpers for reading texts fast without changing an answer: needles (a word search before a
pattern's scan) and line memos (a per-line result remembered by the line)."""

from processors.text.line_memo import LineMemo
from processors.text.needles import literal_starts, may_match

__all__ = ["LineMemo", "literal_starts", "may_match"]
