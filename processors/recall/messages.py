"""The messages-mode answer for one page (spec §8.3), from messages the reader already fetched.

Filters (``partType``, ``toolName``) apply to parts after paging, as in Mastra, so a page that
matches nothing says so rather than silently reading further. High detail shows one part per
call and ends with the exact ways to continue (next part, next message, next page).
"""

from __future__ import annotations

from collections.abc import Sequence

from processors.recall.paging import PageSpec, Window
from processors.recall.parts import FormattedPart, format_message_parts
from processors.recall.render import ANSWER_TOKENS, render_within_budget
from processors.recall.request import RecallRequest
from processors.recall.results import MessagesAnswer
from processors.tokens import TokenCounter
from schemas.messages import ChatMessage

NO_MATCHING_PARTS = "(no message parts matched the current filters)"


def page_answer(
    request: RecallRequest,
    spec: PageSpec,
    window: Window[ChatMessage],
    counter: TokenCounter,
    *,
    cursor: str,
    empty_text: str,
    max_tokens: int = ANSWER_TOKENS,
) -> MessagesAnswer:
    """Render ``window`` at the requested detail; ``empty_text`` is used when no message was found."""
    parts = _filtered_parts(window.items, request, counter)
    timestamps = {msg.id: msg.created_at for msg in window.items}
    common = {"cursor": cursor, "page": spec.page, "limit": spec.limit, "detail": request.detail}
    if request.detail == "high" and parts:
        return _one_part_answer(parts, timestamps, spec, window, counter, max_tokens, common)
    rendered = render_within_budget(parts, timestamps, counter, max_tokens)
    text = rendered.text or (empty_text if not window.items else _nothing_shown(request))
    return MessagesAnswer(
        messages=text,
        count=len(window.items),
        has_next_page=window.has_next_page,
        has_prev_page=window.has_prev_page,
        truncated=rendered.truncated,
        token_offset=rendered.token_offset,
        **common,
    )


def notice_answer(request: RecallRequest, spec: PageSpec, cursor: str, text: str) -> MessagesAnswer:
    """An answer that carries guidance instead of messages (range cursors, cross-thread cursors)."""
    return MessagesAnswer(
        messages=text, count=0, cursor=cursor, page=spec.page, limit=spec.limit, detail=request.detail
    )


def _filtered_parts(msgs: Sequence[ChatMessage], request: RecallRequest, counter: TokenCounter) -> list[FormattedPart]:
    parts = [part for msg in msgs for part in format_message_parts(msg, request.detail, counter)]
    if request.tool_name:
        parts = [p for p in parts if p.type in ("tool-call", "tool-result") and p.tool_name == request.tool_name]
    if request.part_type:
        parts = [p for p in parts if p.type == request.part_type]
    return parts


def _nothing_shown(request: RecallRequest) -> str:
    if request.part_type or request.tool_name:
        return NO_MATCHING_PARTS
    return "(no visible message parts on this page)"


def _one_part_answer(
    parts: list[FormattedPart],
    timestamps: dict[str, int],
    spec: PageSpec,
    window: Window[ChatMessage],
    counter: TokenCounter,
    max_tokens: int,
    common: dict[str, object],
) -> MessagesAnswer:
    first = parts[0]
    same_message = [p for p in parts if p.message_id == first.message_id]
    later_messages = [p for p in parts if p.message_id != first.message_id]
    rendered = render_within_budget([first], timestamps, counter, max_tokens)
    ways: list[str] = []
    if len(same_message) > 1:
        ways.append(f'next part: partIndex={same_message[1].part_index} on cursor="{first.message_id}"')
    if later_messages:
        following = later_messages[0]
        ways.append(f'next message: partIndex={following.part_index} on cursor="{following.message_id}"')
    elif window.has_next_page:
        ways.append(f"more messages on page {spec.page + 1}")
    text = rendered.text
    if ways:
        text += "\n\nHigh detail shows one part per call. To go on: " + ", or ".join(ways) + "."
    return MessagesAnswer(
        messages=text,
        count=1,
        has_next_page=bool(later_messages) or window.has_next_page,
        has_prev_page=window.has_prev_page,
        truncated=rendered.truncated,
        token_offset=rendered.token_offset,
        **common,
    )
