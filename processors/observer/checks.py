"""Format checks on an Observer answer: what the log format requires but a model may forget.

Missing markers are reported as warnings on the parsed result, never as a rejection: an
observation without its 🔴 is still worth more than no observation.

Items are searched for relative dates only when the log holds a word they cannot be written
without (processors/text/needles.py).
"""

from __future__ import annotations

import re

from processors.text.needles import may_match

PRIORITY_MARKERS = ("🔴", "🟡", "🟢", "✅")
_DATE_HEADER = re.compile(r"^\s*Date:\s+[A-Z][a-z]{2,8}\s+\d{1,2},\s+\d{4}\b")
_TOP_LEVEL_ITEM = re.compile(r"^[*-]\s+(.*)$")
_TIME = re.compile(r"\(\d{1,2}:\d{2}\)")
_RELATIVE = re.compile(
    r"\b(?=[\dilnty])"  # the alternatives' first characters: each other place is passed in one test
    r"(yesterday|tomorrow|tonight|last (?:week|month|year|night|monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday)|next (?:week|month|year|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday)|in \d+ (?:days|weeks|months)|\d+ (?:days|weeks|months) ago)\b",
    re.IGNORECASE,
)
_RELATIVE_NEEDLES = ("yesterday", "tomorrow", "tonight", "last ", "next ", " days", " weeks", " months")
"""Words :data:`_RELATIVE` cannot match without: a log holding none has no item to look at."""
_RESOLVED = re.compile(r"\((?:meaning|estimated)\b[^)]*\)\s*$", re.IGNORECASE)


def is_date_header(line: str) -> bool:
    return bool(_DATE_HEADER.match(line))


def format_warnings(observations: str) -> list[str]:
    """One warning per kind of problem, with a count and the first offending line."""
    lines = [line for line in observations.split("\n") if line.strip()]
    if not lines:
        return []
    warnings: list[str] = []
    items = [m.group(1) for line in lines if (m := _TOP_LEVEL_ITEM.match(line))]
    if not any(is_date_header(line) for line in lines):
        warnings.append("no 'Date: Mon D, YYYY' header")
    _add(warnings, "observations without a priority marker (🔴/🟡/🟢/✅)",
         [i for i in items if not i.lstrip().startswith(PRIORITY_MARKERS)])
    _add(warnings, "observations without a (HH:MM) time", [i for i in items if not _TIME.search(i)])
    _add(warnings, "relative dates without '(meaning <date>)'",
         [i for i in items if _RELATIVE.search(i) and not _RESOLVED.search(i)]
         if may_match(observations, _RELATIVE_NEEDLES) else [])
    return warnings


def _add(warnings: list[str], what: str, offenders: list[str]) -> None:
    if offenders:
        warnings.append(f"{len(offenders)} {what}, e.g. {offenders[0][:80]!r}")
