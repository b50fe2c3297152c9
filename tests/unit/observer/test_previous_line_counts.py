"""processors/observer/previous.py (and the Reflector's runner) count lines through the counter's line
memo (``count_lines``/``count_joined``/``count_observation_lines``): the bound must be what counting every string afresh gave, for
tokenx (whose runs never cross a newline: a joined text is the sum of its lines) and for a BPE
counter (which counts the joined text itself), and its candidates' search (the tails that fit found by
bisection, a tail's important lines sliced, not listed) must pick what trying every tail gave. The
reference below is the bound as it was before both: every string counted, every tail tried."""

from __future__ import annotations

import random
from bisect import bisect_left, bisect_right
from itertools import accumulate

import pytest

from processors.observer import previous
from processors.observer.previous import bound_observations
from processors.tokens import get_counter

PIECES = ["* 🔴 (09:02) User is Maya", "✅ booked Memmo, MPR-1", "- -> 3.14 ok", "naïve café — déjà vu",
          "日本語のテキスト", "x?y? ¿qué?", "tabs\tand  spaces", "\u00a0nbsp\u2003em space", "", " ", "1234567890123",
          "::::", "a", "https://example.com/a_b-c", "🟡 (10:00) asked: is Prado open?", "Date: Nov 26, 2026"]


def _line(rng: random.Random) -> str:
    return " ".join(rng.choice(PIECES) for _ in range(rng.randint(0, 6)))


def _reference(text, budget, counter):
    if budget is False or budget is None or not text.strip():
        return text, False
    if budget <= 0:
        return "", True
    if counter.count_string(text) <= budget:
        return text, False
    lines = text.split("\n")
    cost = [counter.count_string(line) + 1 for line in lines]
    marker_cost = counter.count_string("[999 observations truncated here]") + 1
    important_all = [i for i, line in enumerate(lines) if previous._is_important(line)]
    suffix = list(accumulate(reversed(cost)))
    best = None
    for tail in range(len(lines) - 1, 0, -1):
        if best is not None and tail < best[0]:
            break
        room = budget - suffix[tail - 1] - marker_cost
        if room < 0:
            continue
        older = reversed(important_all[: bisect_left(important_all, len(lines) - tail)])
        spent = list(accumulate(cost[i] + marker_cost for i in list(older)[:tail]))
        keep = bisect_right(spent, room)
        if best is None or (keep, tail) > best:
            best = (keep, tail)
    if best is None:
        return "", True
    keep, tail = best
    candidate = "\n".join(_reference_assemble(lines, tail, keep))
    while tail > 0 and counter.count_string(candidate) > budget:
        tail -= 1
        keep = min(keep, tail)
        candidate = "\n".join(_reference_assemble(lines, tail, keep))
    return candidate, True


def _reference_assemble(lines, tail, keep):
    split = len(lines) - tail
    important = [i for i in range(split - 1, -1, -1) if previous._is_important(lines[i])][:keep]
    shown = set(important) | set(range(split, len(lines)))
    out, hidden = [], []
    for index, line in enumerate(lines + [None]):
        if line is None or index in shown:
            if len(hidden) == 1:
                out.append(lines[hidden[0]])
            elif hidden:
                out.append(f"[{len(hidden)} observations truncated here]")
            hidden.clear()
            if line is not None:
                out.append(line)
        else:
            hidden.append(index)
    return out


@pytest.mark.parametrize("name", ["tokenx", "o200k_base"])
def test_the_bound_is_what_counting_every_string_gave(name: str) -> None:
    counter = get_counter(name)
    rng = random.Random(7)
    for _ in range(300):
        text = "\n".join(_line(rng) for _ in range(rng.randint(1, 60)))
        budget = rng.choice([False, None, 0, 5, 20, 60, 150, 400, 5000])
        assert bound_observations(text, budget, counter) == _reference(text, budget, counter), (text, budget)


def test_a_long_log_is_bound_as_trying_every_tail_gave() -> None:
    """Logs of hundreds of lines, as an Observer call on a long thread sees, against budgets from a
    few lines to most of the log: the searched candidate is the one every tail gave."""
    counter = get_counter("tokenx")
    rng = random.Random(23)
    for _ in range(40):
        text = "\n".join(_line(rng) for _ in range(rng.randint(200, 900)))
        budget = rng.choice([10, 100, 500, 2000, 6000])
        assert bound_observations(text, budget, counter) == _reference(text, budget, counter), budget


@pytest.mark.parametrize("name", ["tokenx", "o200k_base"])
def test_joined_lines_count_as_their_text(name: str) -> None:
    counter = get_counter(name)
    rng = random.Random(11)
    for _ in range(500):
        lines = [_line(rng) for _ in range(rng.randint(0, 12))]
        assert counter.count_joined(lines) == counter.count_string("\n".join(lines)), lines
        assert counter.count_lines(lines) == [counter.count_string(line) for line in lines]
        text = "\n".join(lines) + f"\n{rng.random()}"  # not remembered whole
        assert counter.count_observation_lines(text) == counter.count_string(text)


def test_a_line_memo_starts_again_past_its_bound() -> None:
    from processors.text.line_memo import LineMemo
    from processors.tokens.tokenx import estimate_token_count

    computed: list[str] = []

    def count(lines: list[str]) -> list[int]:
        computed.extend(lines)
        return [estimate_token_count(line) for line in lines]

    memo = LineMemo(count, max_chars=100)
    lines = [f"line number {i} of a long log" for i in range(50)]
    assert memo(lines + lines[:3]) == [estimate_token_count(line) for line in lines + lines[:3]]
    assert computed == lines  # each line once, the repeats from the memo
    assert memo(lines[-2:]) == [estimate_token_count(line) for line in lines[-2:]] and computed == lines
    for i in range(50):
        memo([f"another line {i} of the log"])
    assert len(memo) < 10  # started again, several times


def test_counters_of_one_string_counter_share_one_line_memo() -> None:
    """Line counts do not depend on the actor model: one bounded memo per string counter, however many
    model contexts a worker's configs name."""
    first, second = get_counter("tokenx", "openai/gpt-4o"), get_counter("tokenx", "google/gemini-2.5-flash")
    assert first is not second
    line = "a line only this test counts, 42 times"
    first.count_lines([line])
    assert second._line_counts is first._line_counts and line in second._line_counts._memo
    assert get_counter("o200k_base")._line_counts is not first._line_counts
