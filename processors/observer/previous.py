"""Bound the prior observations shown to the Observer (spec §5.2, ``previous_observer_tokens``).

Mastra 1.31.0 leaves this helper unwired; we wire it. Over budget, the newest lines are kept as
a tail, plus up to as many older *important* lines (🔴 or ✅, newest first) as the tail has;
each hidden run becomes ``[N observations truncated here]`` (a run of one keeps its line). Among
the candidates that fit, the one with the most important lines wins, then the longest tail.

Every count here is of lines (``count_lines``, ``count_joined``): the counter remembers each line's
count, and the log shown to each Observer call is mostly the lines of the call before (replaying the
Observer calls of 10 threads x 2,000 messages, counting each line afresh was two thirds of the
worker's CPU per call).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from itertools import accumulate
from typing import Literal

from processors.model_port import TokenCounter

BUFFERED_SEPARATOR = "\n\n--- BUFFERED (pending activation) ---\n\n"
_IMPORTANT = ("🔴", "✅")


def prior_observations_text(
    active: str,
    buffered_chunks: list[str],
    pending_reflection: tuple[str, int] | None = None,
) -> str:
    """Active observations (with a pending reflection standing in for its lines) + buffered chunks."""
    if pending_reflection is not None:
        reflection, line_count = pending_reflection
        rest = "\n".join(active.split("\n")[line_count:]).strip()
        active = f"{reflection}\n\n{rest}" if rest else reflection
    chunks = "\n\n".join(c for c in buffered_chunks if c.strip())
    if active.strip() and chunks:
        return f"{active}{BUFFERED_SEPARATOR}{chunks}"
    return active if active.strip() else chunks


def bound_observations(
    text: str, budget: int | Literal[False] | None, counter: TokenCounter
) -> tuple[str, bool]:
    """``(text within budget, truncated?)``; ``False``/``None`` = no bound, ``0`` = nothing."""
    if budget is False or budget is None or not text.strip():
        return text, False
    if budget <= 0:
        return "", True
    lines = text.split("\n")
    if counter.count_joined(lines) <= budget:
        return text, False
    cost = [count + 1 for count in counter.count_lines(lines)]
    marker_cost = counter.count_string("[999 observations truncated here]") + 1
    important_all = [i for i, line in enumerate(lines) if _is_important(line)]
    best = _best_candidate(cost, marker_cost, important_all, budget)
    if best is None:
        return "", True
    keep, tail = best
    candidate = _assemble(lines, tail, keep, important_all)
    while tail > 0 and counter.count_joined(candidate) > budget:
        tail -= 1
        keep = min(keep, tail)
        candidate = _assemble(lines, tail, keep, important_all)
    return "\n".join(candidate), True


def _best_candidate(cost: list[int], marker_cost: int, important_all: list[int], budget: int) -> tuple[int, int] | None:
    """``(older important lines kept, tail length)``: the most important lines, then the longest tail.

    Only tails that leave room for a marker are candidates (at most all lines but one), found by a
    search over the tail costs, which grow with the tail; a shorter tail is still tried while it
    could keep more important lines than the best so far (at most as many as its own length)."""
    n = len(cost)
    suffix = list(accumulate(reversed(cost)))  # suffix[t - 1]: the cost of the last t lines
    best: tuple[int, int] | None = None
    for tail in range(min(n - 1, bisect_right(suffix, budget - marker_cost)), 0, -1):
        if best is not None and tail < best[0]:
            break
        room = budget - suffix[tail - 1] - marker_cost
        older = bisect_left(important_all, n - tail)
        spent = list(accumulate(cost[i] + marker_cost for i in reversed(important_all[max(0, older - tail):older])))
        keep = bisect_right(spent, room)
        if best is None or (keep, tail) > best:
            best = (keep, tail)
    return best


def _assemble(lines: list[str], tail: int, keep: int, important_all: list[int]) -> list[str]:
    """The last ``tail`` lines and the ``keep`` newest important lines before them, each hidden run
    between them a marker (a run of one keeps its line)."""
    split = len(lines) - tail
    older = bisect_left(important_all, split)
    shown = [*important_all[max(0, older - keep):older], *range(split, len(lines))]
    out: list[str] = []
    previous = -1
    for index in [*shown, len(lines)]:
        hidden = index - previous - 1
        if hidden == 1:
            out.append(lines[previous + 1])
        elif hidden > 1:
            out.append(f"[{hidden} observations truncated here]")
        if index < len(lines):
            out.append(lines[index])
        previous = index
    return out


def _is_important(line: str) -> bool:
    return line.lstrip("*- \t").startswith(_IMPORTANT)
