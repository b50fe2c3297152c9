"""How one stored message reads in a recall answer: its parts, numbered ``[p<i>]`` (spec §8.3).

The index is the part's position in the stored message, so ``partIndex`` in a follow-up call
names exactly the part the agent saw, even though bookkeeping parts (``data-*``, ``step-start``)
are never shown. A tool invocation that has a result yields two entries with the same index:
the call, then the result; fetching that index returns the result.

Low detail keeps every part short and says how to get the rest: text up to 100 tokens, tool
results 20, reasoning 30, each cut part followed by the exact call that returns it in full.
Tool calls show only the tool's name at low detail and the JSON arguments at high detail.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime, timezone

from processors.observer.tool_format import format_tool_result
from processors.recall.budget import truncate_with_hint
from processors.recall.request import Detail
from processors.tokens import TokenCounter
from processors.tokens.tool_results import resolve_result
from schemas.messages import ChatMessage, FilePart, ImagePart, ReasoningPart, TextPart, ToolInvocationPart

TEXT_TOKENS = 100
TOOL_TOKENS = 20
OTHER_TOKENS = 30
TOOL_RESULT_TOKENS = 4_000


@dataclass(frozen=True)
class FormattedPart:
    """One shown part; ``full_text`` is kept so that spare budget can re-expand a cut ``text``."""

    message_id: str
    part_index: int
    role: str
    type: str
    text: str
    full_text: str
    tool_name: str | None = None

    @property
    def was_cut(self) -> bool:
        return self.text != self.full_text

    def with_text(self, text: str) -> FormattedPart:
        return replace(self, text=text)


def follow_up_hint(message_id: str, part_index: int) -> str:
    """The exact call that returns one part in full; quoted verbatim in every truncation."""
    return f'recall cursor="{message_id}" partIndex={part_index} detail="high"'


def low_detail_limit(part_type: str) -> int:
    if part_type == "text":
        return TEXT_TOKENS
    if part_type in ("tool-call", "tool-result"):
        return TOOL_TOKENS
    return OTHER_TOKENS


def format_message_parts(msg: ChatMessage, detail: Detail, counter: TokenCounter) -> list[FormattedPart]:
    """The shown parts of ``msg`` in order; empty when it has nothing a model would see."""
    shown: list[FormattedPart] = []
    for index, part in enumerate(msg.parts):
        if isinstance(part, TextPart) and part.text:
            shown.append(_cut(msg, index, "text", part.text, detail, counter))
        elif isinstance(part, ReasoningPart) and part.text:
            shown.append(_cut(msg, index, "reasoning", part.text, detail, counter))
        elif isinstance(part, ToolInvocationPart):
            shown.extend(_tool_parts(msg, index, part, detail, counter))
        elif isinstance(part, ImagePart):
            shown.append(_label(msg, index, "image", "Image", part.filename))
        elif isinstance(part, FilePart):
            shown.append(_label(msg, index, "file", "File", part.filename))
    return shown


def has_visible_parts(msg: ChatMessage) -> bool:
    return bool(msg.visible_parts())


def format_timestamp(epoch_ms: int) -> str:
    """``YYYY-MM-DD HH:MM:SSZ`` in UTC, the form every recall answer uses."""
    moment = datetime.fromtimestamp(epoch_ms / 1000, tz=timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M:%SZ")


def _tool_parts(
    msg: ChatMessage, index: int, part: ToolInvocationPart, detail: Detail, counter: TokenCounter
) -> list[FormattedPart]:
    shown: list[FormattedPart] = []
    if part.state != "partial-call" and part.args is not None:
        args = "" if detail == "low" else "\n" + json.dumps(part.args, indent=2, ensure_ascii=False, default=str)
        text = f"[Tool Call: {part.tool_name}]{args}"
        shown.append(FormattedPart(msg.id, index, msg.role, "tool-call", text, text, part.tool_name))
    if part.state == "result":
        value, _ = resolve_result(part.provider_metadata, part.result)
        result = format_tool_result(value, counter, token_limit=TOOL_RESULT_TOKENS)
        text = f"[Tool Result: {part.tool_name}]\n{result}"
        shown.append(_cut(msg, index, "tool-result", text, detail, counter, part.tool_name))
    return shown


def _cut(
    msg: ChatMessage,
    index: int,
    part_type: str,
    full_text: str,
    detail: Detail,
    counter: TokenCounter,
    tool_name: str | None = None,
) -> FormattedPart:
    text = full_text
    if detail == "low":
        text = truncate_with_hint(full_text, low_detail_limit(part_type), follow_up_hint(msg.id, index), counter)
    return FormattedPart(msg.id, index, msg.role, part_type, text, full_text, tool_name)


def _label(msg: ChatMessage, index: int, part_type: str, kind: str, filename: str | None) -> FormattedPart:
    text = f"[{kind}: {filename}]" if filename else f"[{kind}]"
    return FormattedPart(msg.id, index, msg.role, part_type, text, text)
