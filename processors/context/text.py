"""The text changes between the stored observation log and what the actor reads (spec §7.1).

Storage keeps the Observer's full format (priority emoji, labels, anchor ids, arrows) because the
Reflector and the recall tool use it; the actor gets a leaner copy, annotated with how long ago
each dated thing was. Both functions are deterministic in their arguments, so the same record
and the same "now" always give byte-identical context (prompt caching depends on it).
"""

from __future__ import annotations

import re

from processors.context.dates import (
    day_gap_line,
    days_since,
    format_reminder_timestamp,
    is_before_now,
    parse_header_date,
    parse_observation_date,
    relative_day_label,
    temporal_gap_text,
)
from processors.text.line_memo import LineMemo

__all__ = [
    "add_relative_time_to_observations",
    "format_reminder_timestamp",
    "optimize_observations_for_context",
    "temporal_gap_text",
]

_ANCHOR_ID = re.compile(r"\[O\d+(?:-N\d+)*\][ \t]*")
_MINOR_PRIORITY = re.compile(r"[🟡🟢][ \t]*")
# A bracketed label, unless it is a collapse marker ("[72 items collapsed - ID: b1fa]") or the
# label of a markdown link ("[docs](https://…)").
_LABEL = re.compile(r"\[(?![\d\s]*items collapsed)[^\]\n]+\](?!\()")
_ARROW = re.compile(r"[ \t]*->[ \t]*")
_INNER_SPACES = re.compile(r"(?<=\S) {2,}")
_TRAILING_SPACES = re.compile(r"[ \t]+$", re.MULTILINE)
_BLANK_RUN = re.compile(r"\n{3,}")


def optimize_observations_for_context(text: str) -> str:
    """Drop what helps the Reflector but costs the actor tokens: ids, minor emoji, labels, arrows.

    🔴 (important) and ✅ (done) stay: they change how the actor should read a line. Unlike
    Mastra, indentation survives (nested bullets stay nested) and arrows never join two lines.

    Every change but the blank runs' is within a line and keeps the line count, so lines are
    changed one by one and remembered by their text (:data:`_LEANER_LINES`): a log that grew by a
    cycle's observations costs its new lines, not the whole log (a 45 kB log grown by 30 lines:
    3.7 → 0.6 ms, made at the first read of each new log). ``tests/unit/context/test_context_text.py`` compares it with the
    passes over the whole text.
    """
    text = "\n".join(_LEANER_LINES(text.split("\n")))
    if "\n\n\n" in text:  # the search is ~15x cheaper than the regular expression's scan that finds nothing
        text = _BLANK_RUN.sub("\n\n", text)
    return text.strip()


def _leaner(lines: list[str]) -> list[str]:
    """The in-line passes, in their order, over the lines joined (one pass each for all of them)."""
    text = "\n".join(lines)
    text = _ANCHOR_ID.sub("", text)
    text = _MINOR_PRIORITY.sub("", text)
    text = _LABEL.sub("", text)
    text = _ARROW.sub(" ", text)
    text = _INNER_SPACES.sub(" ", text)
    text = _TRAILING_SPACES.sub("", text)
    return text.split("\n")


_LEANER_LINES: LineMemo[str] = LineMemo(_leaner)


_INLINE_DATE = re.compile(r"\((estimated|meaning)\s+([^)]+\d{4})\)", re.IGNORECASE)
_DATE_HEADER = re.compile(r"^(Date:[ \t]*)([A-Z][a-z]+ \d{1,2}, \d{4})$", re.MULTILINE)
_FUTURE_INTENT = re.compile(
    r"\b(?:will\s+\w+|plans?\s+to|planning\s+to|looking\s+forward\s+to|going\s+to"
    r"|intends?\s+to|wants?\s+to|needs?\s+to|about\s+to)\b",
    re.IGNORECASE,
)


def add_relative_time_to_observations(text: str, now_ms: int, tz: str = "UTC") -> str:
    """Say how far each dated observation is from now, and how far apart the dated sections are.

    * ``(estimated|meaning <date>)`` becomes ``(… <date> - <relative>)``; when that date has passed
      and the line before it announced an intention ("will", "plans to", "going to"…), the actor
      is told it ``likely already happened`` instead of still treating it as a plan.
    * ``Date: May 15, 2023`` becomes ``Date: May 15, 2023 (5 days ago)``, and a line such as
      ``[5 days later]`` is put before a header more than a day after the previous one.

    Dates are read as the start of that day in ``tz``; unparseable dates are left as they are.
    """
    return _annotate_date_headers(_annotate_inline_dates(text, now_ms, tz), now_ms, tz)


def _annotate_inline_dates(text: str, now_ms: int, tz: str) -> str:
    def annotate(found: re.Match[str]) -> str:
        prefix, content = found.groups()
        day = parse_observation_date(content)
        if day is None:
            return found.group(0)
        relative = relative_day_label(days_since(day, now_ms, tz))
        line_start = text.rfind("\n", 0, found.start()) + 1
        if is_before_now(day, now_ms, tz) and _FUTURE_INTENT.search(text[line_start : found.start()]):
            relative += ", likely already happened"
        return f"({prefix} {content} - {relative})"

    return _INLINE_DATE.sub(annotate, text)


def _annotate_date_headers(text: str, now_ms: int, tz: str) -> str:
    pieces: list[str] = []
    previous_day = None
    position = 0
    for found in _DATE_HEADER.finditer(text):
        prefix, date_text = found.groups()
        day = parse_header_date(date_text)
        if day is None:
            continue
        pieces.append(text[position : found.start()])
        if previous_day is not None and (gap := day_gap_line((day - previous_day).days)):
            pieces.append(f"\n{gap}\n\n")
        pieces.append(f"{prefix}{date_text} ({relative_day_label(days_since(day, now_ms, tz))})")
        previous_day = day
        position = found.end()
    pieces.append(text[position:])
    return "".join(pieces)
