"""Which lines a background reflection takes (spec §4.8), as a pure function.

The slice is sized so that, once reflected, it frees roughly ``R × ba`` tokens; its target is
three quarters of its own size. The tail lines stay untouched and are appended on activation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from processors.tokens.js_compat import js_round

BACKGROUND_TARGET_RATIO = 0.75


@dataclass(frozen=True)
class ReflectionSlice:
    text: str
    line_count: int
    slice_tokens: int
    target: int


def background_slice(observations: str, observation_tokens: int, threshold: int, buffer_activation: float) -> ReflectionSlice:
    lines = observations.split("\n")
    average = observation_tokens / len(lines) if lines else 0
    if average > 0:
        count = min(math.floor(threshold * buffer_activation / average), len(lines))
    else:
        count = len(lines)
    tokens = js_round(average * count)
    return ReflectionSlice(
        text="\n".join(lines[:count]),
        line_count=count,
        slice_tokens=tokens,
        target=js_round(BACKGROUND_TARGET_RATIO * tokens),
    )


def unreflected_tail(observations: str, reflected_line_count: int) -> str:
    """The lines a buffered reflection did not cover (appended to the log since it was sliced)."""
    return "\n".join(observations.split("\n")[reflected_line_count:]).strip()


def activation_paragraphs(reflection: str, observations: str, reflected_line_count: int) -> list[str]:
    """The reflection, then the untouched tail's paragraphs, if any: :func:`activation_text` joins them.

    The tail comes in its paragraphs (split at its blank lines) because it is counted as they are: a
    log's tail is mostly chunk texts, each counted when it arrived, between boundary lines, so a
    counter that adds paragraphs' counts finds most of them remembered
    (:meth:`processors.tokens.counter.MessageTokenCounter.count_paragraphs`); a long tail counted as
    one new string cost a whole log's tokenizing at every roll-over."""
    tail = unreflected_tail(observations, reflected_line_count)
    return [reflection, *tail.split("\n\n")] if tail else [reflection]


def activation_text(reflection: str, observations: str, reflected_line_count: int) -> str:
    """What replaces the log when a buffered reflection activates: reflection + untouched tail."""
    return "\n\n".join(activation_paragraphs(reflection, observations, reflected_line_count))
