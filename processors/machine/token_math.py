"""The numeric policies of buffering and activation (spec §4.2, §4.5), as plain functions.

Everything here is arithmetic over token counts; the spec's worked examples (scenarios 12, 20–22)
are its tests. Kept apart from the state machine so the numbers can be read in one screen.
"""

from __future__ import annotations

from collections.abc import Sequence

MIN_REMAINDER_CAP = 1000
OVERSHOOT_FACTOR = 0.95
RAMP_FACTOR = 1.1


def should_trigger_buffer(pending: int, boundary: int, threshold: int, buffer_tokens: int) -> bool:
    """Whether ``pending`` crossed the next buffering interval since ``boundary``.

    Past the ramp point (``threshold − 1.1 × buffer_tokens``) the interval halves, so the last chunks
    before the threshold are smaller and activation can land close to its retention target.
    """
    if buffer_tokens <= 0 or pending >= threshold:
        return False
    ramp_point = threshold - RAMP_FACTOR * buffer_tokens
    interval = buffer_tokens / 2 if pending >= ramp_point else buffer_tokens
    return int(pending // interval) > int(boundary // interval)


def chunks_to_activate(
    chunk_message_tokens: Sequence[int],
    pending: int,
    threshold: int,
    activation_ratio: float,
    force_max: bool = False,
) -> int:
    """How many leading chunks an activation swaps in (spec §4.5 step 6).

    The aim is to leave about ``threshold × (1 − ratio)`` raw tokens (the retention floor): prefer the
    first prefix that reaches the removal target if it overshoots by at most 95 % of the floor, else
    the longest prefix under the target, never leaving less than ``min(1000, floor)`` tokens unless
    nothing else is possible. A swap always activates at least one chunk.
    """
    if not chunk_message_tokens:
        return 0
    floor = threshold * (1 - activation_ratio)
    target = max(0.0, pending - floor)
    min_remaining = min(MIN_REMAINDER_CAP, floor)
    over: tuple[int, int] | None = None
    under: tuple[int, int] | None = None
    cumulative = 0
    for index, tokens in enumerate(chunk_message_tokens):
        cumulative += tokens
        if cumulative >= target:
            over = (index + 1, cumulative)
            break
        under = (index + 1, cumulative)
    if over and force_max and pending - over[1] >= min_remaining:
        return over[0]
    if over and over[1] - target <= OVERSHOOT_FACTOR * floor and pending - over[1] >= min_remaining:
        return over[0]
    if under and pending - under[1] >= min_remaining:
        return under[0]
    if over:
        return over[0]
    return 1


def projected_message_removal(
    chunk_message_tokens: Sequence[int], pending: int, threshold: int, activation_ratio: float
) -> int:
    """Message tokens an activation would remove now — for the status window only (no force branch)."""
    floor = threshold * (1 - activation_ratio)
    if not chunk_message_tokens or max(0.0, pending - floor) == 0:
        return 0
    count = chunks_to_activate(chunk_message_tokens, pending, threshold, activation_ratio)
    return sum(chunk_message_tokens[:count])
