"""Resolve a relative date in a message against the message's own day (spec §5.3, temporal anchoring).

Rules kept here:

* Only words that name a day or a span relative to *now* are resolved: today, tonight, tomorrow,
  yesterday, in N days / weeks, N days / weeks ago, next / last week, last month, and weekday names
  ("next Tuesday", "on Friday", "by Friday", "last Monday").
* A weekday directly followed by a calendar date ("Tuesday May 12") is already absolute: left alone.
* "next <weekday>" and a bare or "on/by/this <weekday>" mean the first such day *after* the message
  day; "last <weekday>" the most recent one before it.
* Exact days are written "(meaning Mon D, YYYY)"; spans that only locate a time roughly ("last week",
  "last month") are written "(estimated …)", the way the Observer is asked to.
* A text without a word some rule needs is passed by string searches (processors/text/needles.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta

from processors.text.needles import may_match

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY = "(" + "|".join(_WEEKDAYS) + ")"
_MONTH_AHEAD = r"(?!,?\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d)"


@dataclass(frozen=True)
class Resolved:
    phrase: str
    note: str  # "(meaning Nov 28, 2026)" or "(estimated mid-Oct 2026)"


def fmt(day: date) -> str:
    return f"{day:%b} {day.day}, {day.year}"


def _weekday_after(day: date, weekday: int) -> date:
    return day + timedelta(days=(weekday - day.weekday() - 1) % 7 + 1)


def _weekday_before(day: date, weekday: int) -> date:
    return day - timedelta(days=(day.weekday() - weekday - 1) % 7 + 1)


def _month_before(day: date) -> str:
    first = day.replace(day=1) - timedelta(days=1)
    return f"mid-{first:%b} {first.year}"


Rule = Callable[[re.Match[str], date], tuple[str, date | str]]

_RULES: tuple[tuple[re.Pattern[str], Rule], ...] = (
    (re.compile(r"\b(today|tonight|this (?:morning|afternoon|evening))\b", re.I), lambda m, d: ("meaning", d)),
    (re.compile(r"\btomorrow\b", re.I), lambda m, d: ("meaning", d + timedelta(days=1))),
    (re.compile(r"\byesterday\b", re.I), lambda m, d: ("meaning", d - timedelta(days=1))),
    (re.compile(r"\bin (\d+) days?\b", re.I), lambda m, d: ("meaning", d + timedelta(days=int(m[1])))),
    (re.compile(r"\b(\d+) days? ago\b", re.I), lambda m, d: ("meaning", d - timedelta(days=int(m[1])))),
    (re.compile(r"\bin (\d+) weeks?\b", re.I), lambda m, d: ("estimated", d + timedelta(weeks=int(m[1])))),
    (re.compile(r"\b(\d+) weeks? ago\b", re.I), lambda m, d: ("estimated", d - timedelta(weeks=int(m[1])))),
    (re.compile(r"\bnext week\b", re.I), lambda m, d: ("estimated", d + timedelta(days=7))),
    (re.compile(r"\blast week\b", re.I), lambda m, d: ("estimated", d - timedelta(days=7))),
    (re.compile(r"\blast month\b", re.I), lambda m, d: ("estimated", _month_before(d))),
    (re.compile(rf"\blast {_WEEKDAY}\b{_MONTH_AHEAD}", re.I),
     lambda m, d: ("meaning", _weekday_before(d, _WEEKDAYS.index(m[1].lower())))),
    (re.compile(rf"\b(?:next|on|by|this|until|before) {_WEEKDAY}\b{_MONTH_AHEAD}", re.I),
     lambda m, d: ("meaning", _weekday_after(d, _WEEKDAYS.index(m[1].lower())))),
)


_FIRSTS = r"tyinlobu\d"  # what each rule's first word starts with (tests/unit/test_offline_model.py checks)
_ANY = re.compile(rf"\b(?=[{_FIRSTS}])(?:" + "|".join(f"(?:{pattern.pattern})" for pattern, _ in _RULES) + ")", re.I)
"""Every rule at once: the alternation finds the earliest position any rule matches at, and there
the first rule in order, which is the rule the rules tried one by one would pick. Every rule starts
``\\b`` and one of :data:`_FIRSTS`: the look-ahead passes every other place at once instead of
trying each rule's start there (half the scan of a 1 kB message)."""


_NEEDLES = ("day", "tonight", "this ", "tomorrow", "last ", "next week")
_WEEKS = re.compile(r"\d week", re.I)
"""A rule cannot match without one of :data:`_NEEDLES` (every weekday, "today", "yesterday" and "in
3 days" hold "day") or a number of weeks: a text without them is passed by string searches and a
scan for digits, not by :data:`_ANY` (processors/text/needles.py)."""


def resolve(text: str, day: date) -> Resolved | None:
    """The first relative date in ``text``, resolved against ``day``; None when there is none."""
    if not may_match(text, _NEEDLES) and _WEEKS.search(text) is None:
        return None
    first = _ANY.search(text)
    if first is None:
        return None
    for pattern, rule in _RULES:
        if (found := pattern.match(text, first.start())) is not None:
            kind, when = rule(found, day)
            return Resolved(found[0], f"({kind} {when if isinstance(when, str) else fmt(when)})")
    return None
