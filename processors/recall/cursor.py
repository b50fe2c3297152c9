"""Reading the ``cursor`` argument: one message id, or an observation range pasted by mistake.

Observation groups carry ``range="startId:endId"`` (merged ranges: ``a:b,c:d``). Agents often
pass the whole range; recall then answers with a hint naming both ends instead of guessing
(scenario 56). A colon at either end (``:x``, ``x:``) is part of an id, not a range.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RangeCursor:
    start_id: str
    end_id: str

    def hint(self, cursor: str) -> str:
        return (
            f'The cursor "{cursor}" is a range, not a message id. Call recall again with one end of it: '
            f'cursor="{self.start_id}" (start) or cursor="{self.end_id}" (end).'
        )


def parse_range(cursor: str) -> RangeCursor | None:
    """The two ends of a range cursor, or ``None`` when ``cursor`` is a single id."""
    text = cursor.strip()
    if "," in text:
        pieces = [piece.strip() for piece in text.split(",") if piece.strip()]
        if pieces:
            first, last = pieces[0], pieces[-1]
            start = first[: first.index(":")] if first.find(":") > 0 else first
            end = last[last.index(":") + 1 :] if last.find(":") > 0 else last
            return RangeCursor(start, end)
    colon = text.find(":")
    if 0 < colon < len(text) - 1:
        return RangeCursor(text[:colon], text[colon + 1 :])
    return None
