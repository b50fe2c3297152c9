"""processors/observer/degenerate.py ``_TIMES`` and checks.py ``_RELATIVE``: the look-ahead for their
alternatives' first characters changes no match. Each is compared with the pattern as written before
(spelled out here) on observation-like lines and on text with characters IGNORECASE folds specially."""

from __future__ import annotations

import random
import re

from processors.observer import checks, degenerate

TIMES_BEFORE = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[t ]\d{1,2}:\d{2}(?::\d{2})?(?:\.\d+)?z?)?"
    r"|\d{1,2}:\d{2}(?::\d{2})?(?:\s*[ap]\.?m\.?)?"
    r"|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d{1,2}(?:, \d{4})?"
)
RELATIVE_BEFORE = re.compile(
    r"\b(yesterday|tomorrow|tonight|last (?:week|month|year|night|monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday)|next (?:week|month|year|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday)|in \d+ (?:days|weeks|months)|\d+ (?:days|weeks|months) ago)\b",
    re.IGNORECASE,
)
PIECES = ["* 🔴 (10:02) User", "2024-03-05", "2024-03-05t10:02:33.5z", "9:15 pm", "10:02:33", "mar 3, 2024",
          "March 3", "Dec. 12", "sept. 9", "Jun 1", "jul 4", "aug 8, 2025", "oct 31", "nov 5", "feb 2", "apr 1",
          "may 9", "yesterday", "Tomorrow", "last week", "LAST FRIDAY", "next monday", "in 3 days",
          "2 weeks ago", "tonight", "booked", "the flight", "(meaning Mar 4, 2024)", "Date: Mar 3, 2024",
          "x12:30", "a1:2", "ıN 3 DAYS", "ſunday", "lasT nighT", "-", ",", " ", "\n", "→"]


def _lines() -> list[str]:
    rng = random.Random(11)
    lines = []
    for _ in range(4000):
        line = " ".join(rng.choice(PIECES) for _ in range(rng.randint(1, 9)))
        if rng.random() < 0.3:  # words run together: boundaries in odd places
            line = line.replace(" ", rng.choice(["", "-", "  "]))
        lines.append(line)
    return lines


def test_the_times_mask_is_what_it_was() -> None:
    for line in _lines():
        for text in (line, line.lower()):
            assert degenerate._TIMES.sub("#", text) == TIMES_BEFORE.sub("#", text), text


def test_the_relative_dates_check_is_what_it_was() -> None:
    for line in _lines():
        assert [(m.span(), m.groups()) for m in checks._RELATIVE.finditer(line)] == \
               [(m.span(), m.groups()) for m in RELATIVE_BEFORE.finditer(line)], line
    assert checks._RELATIVE.search("ıN 3 DAYS"), "IGNORECASE folds ı to i: the line above reaches that case"
