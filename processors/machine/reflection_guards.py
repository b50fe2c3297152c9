"""Early-trigger guards of a buffered reflection (spec §4.8 ``tryActivateBufferedReflection``).

Why: an idle TTL or a provider change can fire right after a background reflection was stored, before
the log has grown past it. Activating then would collapse the active observations to little more than
the reflection (Mastra saw 17k → 4k tokens). So for those triggers the buffer is kept for the eventual
threshold activation unless

* *composition*: the unreflected tail is at least as large as the buffered reflection, and
* *size*: reflection + tail reaches 75 % of what a threshold activation normally leaves,
  ``R × (1 − ba)`` (15 000 tokens with the defaults).

A threshold trigger is never guarded: at ``R`` the log has to shrink.
"""

from __future__ import annotations

from typing import Literal

from processors.tokens.js_compat import js_round

EARLY_ACTIVATION_SIZE_FLOOR_RATIO = 0.75

Suppression = Literal["composition", "size"]


def early_activation_floor(threshold: int, buffer_activation: float) -> int:
    """The smallest reflection + tail an early activation may leave."""
    return js_round(threshold * (1 - buffer_activation) * EARLY_ACTIVATION_SIZE_FLOOR_RATIO)


def early_activation_suppressed(
    reflection_tokens: int, tail_tokens: int, combined_tokens: int, threshold: int, buffer_activation: float
) -> Suppression | None:
    """Which guard keeps the buffered reflection from an early activation, or None to activate."""
    if tail_tokens < reflection_tokens:
        return "composition"
    if combined_tokens < early_activation_floor(threshold, buffer_activation):
        return "size"
    return None
