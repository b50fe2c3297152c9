"""Find and remove ``<tag>…</tag>`` sections in model answers, tolerating a cut-off last section.

A model that hits its output limit leaves the final section unclosed; we take what is there up to
the next section tag rather than lose it.
"""

from __future__ import annotations

import re

_NEXT_SECTION = re.compile(r"^[ \t]*</?[a-z][a-z0-9-]*(?:\s[^>]*)?>", re.IGNORECASE | re.MULTILINE)


def blocks(text: str, tag: str) -> list[str]:
    """Bodies of every ``<tag>`` section in order, the last possibly unclosed."""
    return [text[body_start:body_end] for _, _, body_start, body_end in _spans(text, tag)]


def last_block(text: str, tag: str) -> str | None:
    found = blocks(text, tag)
    return found[-1] if found else None


def strip_blocks(text: str, tags: list[str]) -> str:
    for tag in tags:
        spans = _spans(text, tag)
        for start, end, _, _ in reversed(spans):
            text = text[:start] + text[end:]
    return text


def _spans(text: str, tag: str) -> list[tuple[int, int, int, int]]:
    """(section start, section end, body start, body end) for each ``<tag>`` section."""
    opening = re.compile(rf"<{re.escape(tag)}>", re.IGNORECASE)
    closing = re.compile(rf"</{re.escape(tag)}>", re.IGNORECASE)
    spans: list[tuple[int, int, int, int]] = []
    position = 0
    while True:
        found = opening.search(text, position)
        if not found:
            return spans
        close = closing.search(text, found.end())
        if close:
            spans.append((found.start(), close.end(), found.end(), close.start()))
            position = close.end()
            continue
        following = _NEXT_SECTION.search(text, found.end())
        end = following.start() if following else len(text)
        spans.append((found.start(), end, found.end(), end))
        return spans
