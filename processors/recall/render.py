"""Turning formatted parts into the recall text within the 2 000-token answer budget (spec §8.3).

Layout: per message a header ``**<role> (<timestamp>)** [<id>]:``, then one line per part
``  [p<i>] <text>``, a blank line between messages.

Budget: if the low-detail rendering is already over budget it is cut hard (``truncated``, and
``tokenOffset`` says by how much). If it is under, the spare tokens buy back detail for parts that
were cut, in priority order: what the user wrote first (up to 200 tokens a part), then assistant
text and reasoning, tool results, tool calls (50 tokens each). A part that still does not fit
whole keeps its follow-up hint.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from processors.recall.budget import StringCounter, truncate_with_hint
from processors.recall.parts import FormattedPart, follow_up_hint, format_timestamp
from processors.tokens.truncate import truncate_to_tokens

ANSWER_TOKENS = 2_000
USER_TEXT_EXPAND_TOKENS = 200
OTHER_EXPAND_TOKENS = 50
_EXPAND_ORDER = {"text": 1, "reasoning": 1, "tool-result": 2, "tool-call": 3}


@dataclass(frozen=True)
class Rendered:
    text: str
    truncated: bool
    token_offset: int


def render_text(parts: Sequence[FormattedPart], timestamps: Mapping[str, int]) -> str:
    """The recall layout of ``parts``; ``timestamps`` maps message id → epoch ms."""
    lines: list[str] = []
    current = None
    for part in parts:
        if part.message_id != current:
            current = part.message_id
            if lines:
                lines.append("")
            stamp = timestamps.get(part.message_id)
            when = f" ({format_timestamp(stamp)})" if stamp is not None else ""
            lines.append(f"**{part.role}{when}** [{part.message_id}]:")
        lines.append(f"  [p{part.part_index}] {part.text}")
    return "\n".join(lines)


def render_within_budget(
    parts: Sequence[FormattedPart],
    timestamps: Mapping[str, int],
    counter: StringCounter,
    max_tokens: int = ANSWER_TOKENS,
) -> Rendered:
    text = render_text(parts, timestamps)
    total = counter.count_string(text)
    if total > max_tokens:
        return _hard_cut(text, total, max_tokens, counter)
    if not any(part.was_cut for part in parts):
        return Rendered(text, False, 0)
    expanded = render_text(_expand(list(parts), max_tokens - total, counter), timestamps)
    expanded_total = counter.count_string(expanded)
    if expanded_total > max_tokens:  # estimates of pieces do not add up exactly: stay in budget
        return _hard_cut(expanded, expanded_total, max_tokens, counter)
    return Rendered(expanded, False, 0)


def _hard_cut(text: str, total: int, max_tokens: int, counter: StringCounter) -> Rendered:
    return Rendered(truncate_to_tokens(text, max_tokens, counter), True, total - max_tokens)


def _expand(parts: list[FormattedPart], spare: int, counter: StringCounter) -> list[FormattedPart]:
    """Give ``spare`` tokens back to cut parts, best first (a stable sort keeps message order)."""
    order = sorted((i for i, part in enumerate(parts) if part.was_cut), key=lambda i: _priority(parts[i]))
    for index in order:
        if spare <= 0:
            break
        part = parts[index]
        full = counter.count_string(part.full_text)
        current = counter.count_string(part.text)
        target = min(full, _expand_limit(part))
        if target - current <= 0:
            continue
        if target == full and full - current <= spare:
            parts[index] = part.with_text(part.full_text)
            spare -= full - current
            continue
        allowed = min(current + spare, _expand_limit(part))
        hint = follow_up_hint(part.message_id, part.part_index)
        grown = truncate_with_hint(part.full_text, allowed, hint, counter)
        parts[index] = part.with_text(grown)
        spare -= counter.count_string(grown) - current
    return parts


def _priority(part: FormattedPart) -> int:
    if part.role == "user" and part.type == "text":
        return 0
    return _EXPAND_ORDER.get(part.type, 4)


def _expand_limit(part: FormattedPart) -> int:
    return USER_TEXT_EXPAND_TOKENS if part.role == "user" and part.type == "text" else OTHER_EXPAND_TOKENS
