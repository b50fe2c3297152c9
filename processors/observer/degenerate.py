"""Detect degenerate (looping) model output before it can reach the log (spec §5.7, [main] rules).

Over-long lines are cut *before* detection, so one huge line is a truncation, not a failure; and
short lines (e.g. ``* -> pnpm build → ok`` repeated by a faithful tool log) are left out of the
window sampler, so honest repetition is not mistaken for a loop.

Both checks compare lines after masking what a stuck small model varies while it loops (issue 24:
the same two sentences 28 times, each with the next minute's time): times and dates, priority
markers, case and spacing — lines differing only there count as repeats, at the spec's ratio. With
every number masked too, lines must be nearly all repeats (``_NUMBERS_REPEAT_RATIO``): an honest log
of a recurring task ("spent 20 euros", "spent 30 euros") differs only by its numbers as well.

A loop too short for those checks (SmolLM2-135M: "* The assistant will continue the task." five
times in a ten-line answer) is salvaged instead (:func:`drop_repeated_lines`): a meaningful line
that repeats an earlier line of the same answer character for character says nothing new and is
dropped, with a warning. Short lines (a sub-note's ``-> ok`` under two parents) are kept: their
meaning is their place. Our rule, not Mastra's.

A line's keys are remembered (processors/text/line_memo.py): a Reflector's answer repeats most of
the log it was given, at every compression level. The keys of the lines not remembered are made in
one pass over them joined by newlines, not three passes per line: no mask can match a newline
(``_TIMES`` spaces an "am"/"pm" within the line), so the joined text's masks are each line's; and
where no month's name is in the text, only the alternatives that start with a digit are tried
(tests/unit/observer/test_observer_lookaheads.py).
"""

from __future__ import annotations

import re

from processors.text.line_memo import LineMemo

MAX_LINE_CHARS = 10_000
TRUNCATION_SUFFIX = " … [truncated]"
_MIN_TEXT_CHARS = 2_000
_WINDOW = 200
_MIN_WINDOWS = 5
_WINDOW_REPEAT_RATIO = 0.4
_MEANINGFUL_LINE = 24
_MIN_MEANINGFUL_LINES = 20
_LINE_REPEAT_RATIO = 0.5
_NUMBERS_REPEAT_RATIO = 0.8
_DIGIT_TIMES = (r"\d(?:\d{3}-\d{2}-\d{2}(?:[t ]\d{1,2}:\d{2}(?::\d{2})?(?:\.\d+)?z?)?"  # ISO dates and timestamps
                r"|\d?:\d{2}(?::\d{2})?(?:[^\S\n]*[ap]\.?m\.?)?)")  # 10:02, 10:02:33, 9:15 pm (spaced within the line)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_TIMES = re.compile(
    r"(?=[\dadfjmnos])"  # the alternatives' first characters: each other place is passed in one test
    rf"(?:{_DIGIT_TIMES}|(?:{'|'.join(_MONTHS)})[a-z]*\.? \d{{1,2}}(?:, \d{{4}})?)"  # Mar 3, 2024
)
_DIGITS_FIRST = re.compile(_DIGIT_TIMES)
"""``_TIMES`` where no month's name is in the text: its month alternative cannot match, and what is
left starts with a digit, which the engine skips to (a quarter of the scan)."""
_NUMBERS = re.compile(r"\d+")
_MARKERS = ("\U0001F534", "\U0001F7E1", "\U0001F7E2", "\u2705")


def truncate_long_lines(text: str, limit: int = MAX_LINE_CHARS) -> str:
    return "\n".join(
        line if len(line) <= limit else line[:limit] + TRUNCATION_SUFFIX for line in text.split("\n")
    )


def is_degenerate(text: str) -> bool:
    """True when the (already line-truncated) text repeats itself like a stuck decoder."""
    if len(text) < _MIN_TEXT_CHARS:
        return False
    lines = [line.strip() for line in text.split("\n")]
    entries = _loop_entries([line for line in lines if len(line) >= _MEANINGFUL_LINE])
    keys = [key for key, _ in entries]
    if len(keys) >= _MIN_MEANINGFUL_LINES:
        if _repeat_share(keys) > _LINE_REPEAT_RATIO:
            return True
        if _repeat_share([numbers_masked for _, numbers_masked in entries]) > _NUMBERS_REPEAT_RATIO:
            return True
    return _windows_repeat("\n".join(keys))


def drop_repeated_lines(text: str) -> tuple[str, int]:
    """The text without meaningful lines that repeat an earlier line exactly, and how many went."""
    seen: set[str] = set()
    kept: list[str] = []
    for line in text.split("\n"):
        key = line.strip()
        if len(key) >= _MEANINGFUL_LINE:
            if key in seen:
                continue
            seen.add(key)
        kept.append(line)
    return "\n".join(kept), text.count("\n") + 1 - len(kept)


def _repeat_share(lines: list[str]) -> float:
    return (len(lines) - len(set(lines))) / len(lines)


def loop_keys(lines: list[str]) -> list[str]:
    """Each line (no newline in it) as a loop sees it: times and dates masked, markers dropped,
    case and spacing folded."""
    return [key for key, _ in _loop_entries(lines)]


def _entries_in_one_pass(lines: list[str]) -> list[tuple[str, str]]:
    """Each line's loop key, and the key with its numbers masked too, made over the lines joined
    (no mask matches a newline)."""
    keys = _keys_in_one_pass(lines)
    return list(zip(keys, _NUMBERS.sub("#", "\n".join(keys)).split("\n")))


def _keys_in_one_pass(lines: list[str]) -> list[str]:
    text = "\n".join(line.strip() for line in lines).lower()
    for marker in _MARKERS:
        text = text.replace(marker, "")
    times = _TIMES if any(month in text for month in _MONTHS) else _DIGITS_FIRST
    return [" ".join(line.split()) for line in times.sub("#", text).split("\n")]


_loop_entries = LineMemo(_entries_in_one_pass)
"""Each line's (loop key, loop key with numbers masked), remembered by line."""


def _windows_repeat(text: str) -> bool:
    if len(text) < _MIN_TEXT_CHARS:
        return False
    step = max(1, len(text) // 50)
    seen: set[str] = set()
    total = repeats = 0
    for start in range(0, len(text) - _WINDOW + 1, step):
        window = text[start : start + _WINDOW]
        total += 1
        if window in seen:
            repeats += 1
        seen.add(window)
    return total > _MIN_WINDOWS and repeats / total > _WINDOW_REPEAT_RATIO
