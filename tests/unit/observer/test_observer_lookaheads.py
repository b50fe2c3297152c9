"""processors/observer/degenerate.py ``_TIMES`` and checks.py ``_RELATIVE``: the look-ahead for their
alternatives' first characters changes no match. Each is compared with the pattern as written before
(spelled out here) on observation-like lines and on text with characters IGNORECASE folds specially.
``_TIMES`` masks a text of many lines as the pattern before masked each line, and ``loop_keys``
gives each line the key the one-line ``loop_key`` (spelled out here) gave it."""

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
          "x12:30", "a1:2", "ıN 3 DAYS", "ſunday", "lasT nighT", "-", ",", " ", "\n", "→", "10:02\npm", "🔴",
          "✅ ", "\t", "\u00a0", "\u2028", "\x1c", "\u3000", "ΟΔΟΣ", "İstanbul", " ΣΑΣ\n"]


def _lines() -> list[str]:
    rng = random.Random(11)
    lines = []
    for _ in range(4000):
        line = " ".join(rng.choice(PIECES) for _ in range(rng.randint(1, 9)))
        if rng.random() < 0.3:  # words run together: boundaries in odd places
            line = line.replace(" ", rng.choice(["", "-", "  "]))
        lines.append(line)
    return lines


def test_the_times_mask_is_what_it_was_on_each_line() -> None:
    for line in _lines():
        for text in (line, line.lower()):
            each_line = "\n".join(TIMES_BEFORE.sub("#", part) for part in text.split("\n"))
            assert degenerate._TIMES.sub("#", text) == each_line


def _loop_key_before(line: str) -> str:
    masked = TIMES_BEFORE.sub("#", re.sub("[\U0001F534\U0001F7E1\U0001F7E2\u2705]", "", line.strip().lower()))
    return re.sub(r"\s+", " ", masked).strip()


def test_the_loop_keys_of_many_lines_are_each_line_s_key() -> None:
    lines = [part for line in _lines() for part in line.split("\n")]
    degenerate._loop_entries.clear()  # keyed in one pass each, not remembered
    for start in range(0, len(lines), 97):
        some = lines[start : start + 97]
        assert degenerate.loop_keys(some) == [_loop_key_before(line) for line in some]
    for start in range(0, len(lines), 89):  # remembered now, and mixed with lines not remembered
        some = lines[start : start + 89] + [f"{line} once more" for line in lines[start : start + 7]]
        assert degenerate.loop_keys(some) == [_loop_key_before(line) for line in some]
    monthless = [line for line in lines if not any(month in line.lower() for month in degenerate._MONTHS)]
    assert len(monthless) > 1000
    degenerate._loop_entries.clear()  # so these go through the digits-only pattern
    for start in range(0, len(monthless), 97):
        some = monthless[start : start + 97]
        assert degenerate.loop_keys(some) == [_loop_key_before(line) for line in some]
    assert degenerate.loop_keys([]) == []
    every_space = "".join(chr(c) for c in range(0x3001) if chr(c).isspace() and chr(c) != "\n")
    assert degenerate.loop_keys([f"a{every_space}b"]) == [_loop_key_before(f"a{every_space}b")] == ["a b"]


def test_the_relative_dates_check_is_what_it_was() -> None:
    for line in _lines():
        assert [(m.span(), m.groups()) for m in checks._RELATIVE.finditer(line)] == \
               [(m.span(), m.groups()) for m in RELATIVE_BEFORE.finditer(line)], line
    assert checks._RELATIVE.search("ıN 3 DAYS"), "IGNORECASE folds ı to i: the line above reaches that case"


def _is_degenerate_before(text: str) -> bool:
    if len(text) < degenerate._MIN_TEXT_CHARS:
        return False
    lines = [line.strip() for line in text.split("\n")]
    meaningful = [_loop_key_before(line) for line in lines if len(line) >= degenerate._MEANINGFUL_LINE]
    if len(meaningful) >= degenerate._MIN_MEANINGFUL_LINES:
        if degenerate._repeat_share(meaningful) > degenerate._LINE_REPEAT_RATIO:
            return True
        numbers_masked = [re.sub(r"\d+", "#", line) for line in meaningful]
        if degenerate._repeat_share(numbers_masked) > degenerate._NUMBERS_REPEAT_RATIO:
            return True
    return degenerate._windows_repeat("\n".join(meaningful))


def test_is_degenerate_judges_as_it_did_line_by_line() -> None:
    rng = random.Random(5)
    lines = _lines()
    verdicts = set()
    for _ in range(300):
        pool = rng.sample(lines, rng.randint(1, 40))  # few distinct lines: loops; many: honest logs
        text = "\n".join(rng.choice(pool) + rng.choice(["", f" {rng.randint(0, 99)}", f" ({rng.randint(0, 23)}:15)"])
                         for _ in range(rng.randint(5, 120)))
        assert degenerate.is_degenerate(text) == _is_degenerate_before(text), text
        verdicts.add(degenerate.is_degenerate(text))
    assert verdicts == {True, False}
