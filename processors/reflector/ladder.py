"""The compression ladder (spec §5.8): retry at rising levels until the rewrite fits the target.

Rules this file keeps:

* A degenerate answer, or an empty one for non-empty input, is never a candidate (PR #22074:
  an empty reflection would erase the memory).
* The first valid candidate under the target wins at once.
* When no level reaches the target, the *smallest* valid candidate is returned. Mastra 1.31.0
  returns the last attempt even when an earlier one was smaller (its docs promise the smallest);
  we do what the docs say.
* No valid candidate at all → :class:`ReflectionFailed`; the caller commits nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Awaitable, Callable

from processors.model_port import ModelCallError, Usage
from processors.observer.parse import ParsedAnswer
from processors.reflector.levels import last_level


class ReflectionFailed(Exception):
    def __init__(self, message: str, levels: list[int], degenerate: bool, usage: Usage, attempts: int) -> None:
        super().__init__(message)
        self.levels = levels
        self.degenerate = degenerate
        self.usage = usage
        self.attempts = attempts


@dataclass
class Attempt:
    """One rung: the parsed answer and what it cost."""

    parsed: ParsedAnswer
    usage: Usage = field(default_factory=Usage)
    attempts: int = 1


@dataclass
class LadderResult:
    parsed: ParsedAnswer
    tokens: int
    level: int
    reached_target: bool
    levels_tried: list[int]
    usage: Usage
    attempts: int


Generate = Callable[[int], Awaitable[Attempt]]


async def climb(
    generate: Generate,
    count: Callable[[str], int],
    *,
    start: int,
    target: int,
    input_is_empty: bool = False,
) -> LadderResult:
    """Raises :class:`ReflectionFailed` (or the model's :class:`ModelCallError`, usage attached)."""
    best: tuple[int, int, ParsedAnswer] | None = None
    tried: list[int] = []
    usage, attempts = Usage(), 0
    all_degenerate = True
    for level in range(start, last_level(start) + 1):
        tried.append(level)
        try:
            attempt = await generate(level)
        except ModelCallError as exc:
            exc.usage = usage + exc.usage
            exc.attempts = attempts + exc.attempts
            raise
        usage, attempts = usage + attempt.usage, attempts + attempt.attempts
        parsed = attempt.parsed
        all_degenerate = all_degenerate and parsed.degenerate
        if parsed.degenerate or (not parsed.observations.strip() and not input_is_empty):
            continue
        tokens = count(parsed.observations)
        if tokens < target:
            return LadderResult(parsed, tokens, level, True, tried, usage, attempts)
        if best is None or tokens < best[0]:
            best = (tokens, level, parsed)
    if best is None:
        reason = "degenerate output at every level" if all_degenerate else "empty output for non-empty input"
        raise ReflectionFailed(f"reflection produced no usable text ({reason})", tried, all_degenerate, usage, attempts)
    tokens, level, parsed = best
    return LadderResult(parsed, tokens, level, False, tried, usage, attempts)
