"""Detect degenerate (looping) model output before it can reach the log (spec §5.7, [main] rules).

Over-long lines are cut *before* detection, so one huge line is a truncation, not a failure; and
short lines (e.g. ``* -> pnpm build → ok`` repeated by a faithful tool log) are left out of the
window sampler, so honest repetition is not mistaken for a loop.
"""

from __future__ import annotations

MAX_LINE_CHARS = 10_000
TRUNCATION_SUFFIX = " … [truncated]"
_MIN_TEXT_CHARS = 2_000
_WINDOW = 200
_MIN_WINDOWS = 5
_WINDOW_REPEAT_RATIO = 0.4
_MEANINGFUL_LINE = 24
_MIN_MEANINGFUL_LINES = 20
_LINE_REPEAT_RATIO = 0.5


def truncate_long_lines(text: str, limit: int = MAX_LINE_CHARS) -> str:
    return "\n".join(
        line if len(line) <= limit else line[:limit] + TRUNCATION_SUFFIX for line in text.split("\n")
    )


def is_degenerate(text: str) -> bool:
    """True when the (already line-truncated) text repeats itself like a stuck decoder."""
    if len(text) < _MIN_TEXT_CHARS:
        return False
    lines = [line.strip() for line in text.split("\n")]
    meaningful = [line for line in lines if len(line) >= _MEANINGFUL_LINE]
    if len(meaningful) >= _MIN_MEANINGFUL_LINES:
        repeats = len(meaningful) - len(set(meaningful))
        if repeats / len(meaningful) > _LINE_REPEAT_RATIO:
            return True
    return _windows_repeat("\n".join(meaningful))


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
