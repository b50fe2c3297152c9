"""``partIndex``: one part of the cursor message at full detail, in budget-sized chunks (spec §8.3).

A part larger than the budget comes back in consecutive chunks; each answer names the exact call
for the next one (``charOffset`` = the ``nextCharOffset`` just returned), so the agent never has
to compute an offset. An index past the last shown part of the message usually means "what comes
next", so the first part of the next visible message is shown instead, with a note saying so.
"""

from __future__ import annotations

from processors.recall.budget import chunk_text
from processors.recall.parts import FormattedPart, format_message_parts
from processors.recall.render import ANSWER_TOKENS
from processors.recall.results import PartAnswer, RecallError
from processors.tokens import TokenCounter
from schemas.messages import ChatMessage


def needs_next_message(msg: ChatMessage, part_index: int, counter: TokenCounter) -> bool:
    """Whether answering ``part_index`` for ``msg`` falls back to the next visible message."""
    shown = format_message_parts(msg, "high", counter)
    return bool(shown) and part_index > max(p.part_index for p in shown)


def part_answer(
    msg: ChatMessage,
    part_index: int,
    char_offset: int | None,
    counter: TokenCounter,
    *,
    next_message: ChatMessage | None = None,
    max_tokens: int = ANSWER_TOKENS,
) -> PartAnswer:
    """Raises :class:`RecallError` when the part does not exist and there is nothing after it."""
    shown = format_message_parts(msg, "high", counter)
    if not shown:
        raise RecallError(
            f"Message {msg.id} has nothing to show (only internal bookkeeping parts). "
            "Try a neighbouring message id as the cursor."
        )
    # A tool invocation shows its call and its result under one index; the result is the answer.
    target = next((p for p in reversed(shown) if p.part_index == part_index), None)
    if target is not None:
        return _chunk_answer(target, target.text, msg.id, part_index, char_offset, counter, max_tokens)
    fallback = _first_part(next_message, counter) if part_index > max(p.part_index for p in shown) else None
    if fallback is None:
        indices = ", ".join(str(p.part_index) for p in shown)
        raise RecallError(f"Message {msg.id} has no part {part_index}. Its parts are: {indices}.")
    note = (
        f"Message {msg.id} has no part {part_index}; showing part {fallback.part_index} "
        f"of the next message {fallback.message_id}.\n\n"
    )
    return _chunk_answer(fallback, note + fallback.text, msg.id, part_index, char_offset, counter, max_tokens)


def _first_part(msg: ChatMessage | None, counter: TokenCounter) -> FormattedPart | None:
    shown = format_message_parts(msg, "high", counter) if msg is not None else []
    return shown[0] if shown else None


def _chunk_answer(
    part: FormattedPart,
    text: str,
    cursor: str,
    requested_index: int,
    char_offset: int | None,
    counter: TokenCounter,
    max_tokens: int,
) -> PartAnswer:
    chunk = chunk_text(text, max_tokens, char_offset or 0, counter)
    note = None
    if chunk.next_char_offset is not None:
        note = (
            f'More of this part remains. Continue with: recall cursor="{cursor}" partIndex={requested_index} '
            f'detail="high" charOffset={chunk.next_char_offset}'
        )
    return PartAnswer(
        text=chunk.text,
        message_id=part.message_id,
        part_index=part.part_index,
        role=part.role,
        type=part.type,
        truncated=chunk.truncated,
        char_offset=chunk.char_offset,
        next_char_offset=chunk.next_char_offset,
        note=note,
    )
