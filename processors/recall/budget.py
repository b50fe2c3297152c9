"""Cutting recall output to token budgets (spec §8.3).

Two different cuts, because they serve different readers:

* :func:`processors.tokens.truncate.truncate_to_tokens` (Mastra's ``truncateStringByTokens``,
  shared with the Observer's tool results) keeps a prefix and says how much was left out; the
  marker counts against the budget, so a 2 000-token answer really is at most 2 000 tokens.
  :func:`truncate_with_hint` adds where to read on.
* :func:`chunk_text` cuts a single large part into consecutive windows addressed by character
  offsets, so that an agent can read all of it by following ``nextCharOffset`` and the chunks
  concatenate to the original text. Offsets are Python string indices (code points); they are
  opaque to the agent, which must pass back exactly what it got.
"""

from __future__ import annotations

from dataclasses import dataclass

from processors.tokens.truncate import StringCounter, truncate_to_tokens


def truncate_with_hint(text: str, max_tokens: int, hint: str, counter: StringCounter) -> str:
    """:func:`truncate_to_tokens` plus `` [<hint> for more]`` when anything was cut (hint outside the budget)."""
    if counter.count_string(text) <= max_tokens:
        return text
    return f"{truncate_to_tokens(text, max_tokens, counter)} [{hint} for more]"


@dataclass(frozen=True)
class Chunk:
    text: str
    char_offset: int
    next_char_offset: int | None
    truncated: bool


def chunk_text(text: str, max_tokens: int, char_offset: int, counter: StringCounter) -> Chunk:
    """The window of ``text`` starting at ``char_offset`` that fits ``max_tokens``."""
    start = max(0, min(char_offset, len(text)))
    remaining = text[start:]
    if not remaining or counter.count_string(remaining) <= max_tokens:
        return Chunk(remaining, start, None, False)
    best, low, high = 0, 0, len(remaining)
    while low <= high:
        mid = (low + high) // 2
        if mid and counter.count_string(remaining[:mid]) <= max_tokens:
            best, low = mid, mid + 1
        else:
            high = mid - 1
    best = max(best, 1)  # always make progress, even when one character exceeds the budget
    return Chunk(remaining[:best], start, start + best, start + best < len(text))
