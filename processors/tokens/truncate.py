"""Cutting a text to a token budget, as Mastra 1.31's ``truncateStringByTokens`` (tool-result-helpers.ts).

The format is a fact the model reads: the kept prefix, a newline, then ``... [truncated ~N tokens]``
where N is the estimate of what was cut (total minus kept). The marker counts against the budget,
so the whole answer is at most ``max_tokens``. The prefix is found by binary search over UTF-16
units, never splitting a surrogate pair (``safeSlice``), so the cut lands where Mastra's does.
An empty text or a budget of zero gives the empty string.
"""

from __future__ import annotations

from typing import Protocol

from processors.tokens.js_compat import utf16_length, utf16_prefix


class StringCounter(Protocol):
    def count_string(self, text: str) -> int: ...


def truncate_to_tokens(text: str, max_tokens: int, counter: StringCounter) -> str:
    if not text or max_tokens <= 0:
        return ""
    total = counter.count_string(text)
    if total <= max_tokens:
        return text

    def candidate(units: int) -> str:
        kept = utf16_prefix(text, units)
        return f"{kept}\n... [truncated ~{total - counter.count_string(kept)} tokens]"

    best = candidate(0)
    low, high = 0, utf16_length(text)
    while low <= high:
        middle = (low + high) // 2
        attempt = candidate(middle)
        if counter.count_string(attempt) <= max_tokens:
            best, low = attempt, middle + 1
        else:
            high = middle - 1
    return best
