"""Render chat messages as the Observer's history input (spec §5.1).

Times are shown in the record's time zone (``tz``), never the process's: the same log must read
the same on every worker. A date line (``Dec 4 2024:``) opens each new day; each line is
``Title (h:mm AM): body`` with the time left out when it repeats the previous line's.

Titles are facts of Mastra 1.31's format: the role (``User``, ``Assistant``, ``Signal`` for a
temporal-gap reminder, whose body is its whole text ``2 hours later — 01/05/2026, 11:05 AM UTC``),
``Reasoning``, ``Image``/``File`` by the part's type — an image-like *file* part reads
``File: [Image #1: photo.jpg]`` — and ``Tool Call|Result|Error|Denied <tool>``. A failed or
denied call shows its error text or reason, else Mastra's fallback sentence. A result of AI-SDK
``type: 'content'`` reads as its JSON with each image or file block replaced by its placeholder,
numbered with the messages' own attachments (``result_blocks.py``), the bytes forwarded as the
filter allows.

Deliberate difference: the reminder is stamped 1 ms before the message it precedes (as Mastra
stamps it) and the history is in time order, so the Observer always reads "2 hours later" just
before what the user then said; Mastra's list keeps insertion order, where it can follow it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from processors.observer.attachments import (
    DEFAULT_OBSERVE_ATTACHMENTS,
    AttachmentCounter,
    AttachmentFilter,
    content_part,
    matching_mime,
    placeholder,
    should_forward,
)
from processors.model_port import TokenCounter
from processors.observer.result_blocks import with_placeholders
from processors.observer.tool_args import format_tool_args
from processors.observer.tool_format import RESULT_TOKEN_LIMIT, format_tool_result
from schemas.messages import (
    ChatMessage,
    FilePart,
    ImagePart,
    ReasoningPart,
    TextPart,
    ToolInvocationPart,
)

HISTORY_HEADING = "## New Message History to Observe"
_TERMINAL_TITLES = {"result": "Tool Result", "output-error": "Tool Error", "output-denied": "Tool Denied"}
# Mastra's own fallbacks, word for word: they are what the model is shown, a format fact.
TOOL_FAILED = "Tool execution failed"
TOOL_DENIED = "Tool call was not approved by the user"
EMPTY_RESULT = "[empty result]"


@dataclass
class RenderOptions:
    tz: str = "UTC"
    model: str = ""
    observe_attachments: AttachmentFilter = field(default_factory=lambda: list(DEFAULT_OBSERVE_ATTACHMENTS))
    tool_result_tokens: int = RESULT_TOKEN_LIMIT
    part_char_limit: int | None = None


@dataclass
class _Cursor:
    """What carries over from line to line: the current day, last time label, tool pairing."""

    zone: ZoneInfo
    last_date: str | None = None
    last_time: str | None = None
    called: set[str] = field(default_factory=set)


class HistoryRenderer:
    """Renders one Observer call's history.

    Attachment numbers run across the whole call (all threads); the day/time labels and tool
    call pairing restart with each :meth:`render_body` (one per thread).
    """

    def __init__(self, counter: TokenCounter, options: RenderOptions | None = None) -> None:
        self.counter = counter
        self.options = options or RenderOptions()
        self.attachments = AttachmentCounter()
        self._zone = ZoneInfo(self.options.tz)

    def render(self, messages: list[ChatMessage]) -> list[dict[str, Any]]:
        """Content parts for the history message: heading, then text + attachments per message."""
        return [_text(HISTORY_HEADING), *self.render_body(messages)]

    def render_body(self, messages: list[ChatMessage]) -> list[dict[str, Any]]:
        cursor = _Cursor(self._zone)
        parts: list[dict[str, Any]] = []
        for message in messages:
            lines, forwarded = self._message(message, cursor)
            if lines:
                parts.append(_text("\n".join(lines)))
            parts.extend(forwarded)
        return parts

    def _message(self, message: ChatMessage, cursor: _Cursor) -> tuple[list[str], list[dict[str, Any]]]:
        lines: list[str] = []
        forwarded: list[dict[str, Any]] = []
        for part in message.parts:
            stamp = part.created_at if part.created_at is not None else message.created_at
            for title, body in self._entries(part, message.role, cursor, forwarded):
                lines.extend(self._line(cursor, stamp, title, body))
        return lines, forwarded

    def _entries(
        self, part: Any, role: str, cursor: _Cursor, forwarded: list[dict[str, Any]]
    ) -> list[tuple[str, str]]:
        if isinstance(part, TextPart):
            return [(role.capitalize(), self._cap(part.text))] if part.text.strip() else []
        if isinstance(part, ReasoningPart):
            return [("Reasoning", self._cap(part.text))] if part.text.strip() else []
        if isinstance(part, (ImagePart, FilePart)):
            return [self._attachment(part, forwarded)]
        if isinstance(part, ToolInvocationPart):
            return self._tool(part, cursor, forwarded)
        return []

    def _attachment(
        self, part: ImagePart | FilePart, forwarded: list[dict[str, Any]], typed: bool | None = None
    ) -> tuple[str, str]:
        text, image = placeholder(part, self.attachments, typed is not False)
        if should_forward(matching_mime(part, image, typed), self.options.observe_attachments, self.options.model):
            forwarded.append(content_part(part, image))
        return ("Image" if isinstance(part, ImagePart) else "File"), text

    def _tool(
        self, part: ToolInvocationPart, cursor: _Cursor, forwarded: list[dict[str, Any]]
    ) -> list[tuple[str, str]]:
        entries: list[tuple[str, str]] = []
        if part.tool_call_id not in cursor.called:
            cursor.called.add(part.tool_call_id)
            args = format_tool_args(part.args, self.counter, char_limit=self.options.part_char_limit)
            entries.append((f"Tool Call {part.tool_name}", args))
        terminal = _TERMINAL_TITLES.get(part.state)
        if terminal:
            if part.state == "result" and _is_error(part):
                terminal = "Tool Error"
            entries.append((f"{terminal} {part.tool_name}", self._cap(self._outcome(part, forwarded))))
        return entries

    def _outcome(self, part: ToolInvocationPart, forwarded: list[dict[str, Any]]) -> str:
        """An error shows its result, else its error text, else the fallback; a denial its reason.

        A result shows with its attachment blocks as placeholders (``result_blocks.py``); one that
        is missing or blank shows as ``[empty result]`` (for an error: the error text)."""
        if part.state == "output-error":
            return _or(part.error_text, TOOL_FAILED)
        if part.state == "output-denied":
            return _or(part.approval_reason, TOOL_DENIED)
        mastra = (part.provider_metadata or {}).get("mastra") or {}
        result = mastra.get("modelOutput", part.result) if isinstance(mastra, dict) else part.result
        shown = with_placeholders(result, lambda found: self._attachment(found.part, forwarded, found.typed)[1])
        if shown is None or (isinstance(shown, str) and not shown.strip()):
            return _or(part.error_text, TOOL_FAILED) if _is_error(part) else EMPTY_RESULT
        return format_tool_result(shown, self.counter, token_limit=self.options.tool_result_tokens)

    def _line(self, cursor: _Cursor, stamp: int, title: str, body: str) -> list[str]:
        moment = datetime.fromtimestamp(stamp / 1000, tz=cursor.zone)
        out: list[str] = []
        date_label = f"{moment:%b} {moment.day} {moment.year}:"
        if date_label != cursor.last_date:
            cursor.last_date, cursor.last_time = date_label, None
            out.append(date_label)
        time_label = f"{(moment.hour % 12) or 12}:{moment:%M} {'AM' if moment.hour < 12 else 'PM'}"
        if time_label == cursor.last_time:
            out.append(f"{title}: {body}")
        else:
            out.append(f"{title} ({time_label}): {body}")
        cursor.last_time = time_label
        return out

    def _cap(self, text: str) -> str:
        limit = self.options.part_char_limit
        if limit is None or len(text) <= limit:
            return text
        return f"{text[:limit]}\n... [truncated {len(text) - limit} characters]"


def history_text(parts: list[dict[str, Any]]) -> str:
    """The text of a rendered history, attachments left out (for token budgets and tests)."""
    return "\n".join(p["text"] for p in parts if p.get("type") == "text")


def _is_error(part: ToolInvocationPart) -> bool:
    extras = part.model_extra or {}
    return bool(extras.get("is_error", extras.get("isError")))


def _or(text: str | None, fallback: str) -> str:
    return text if text and text.strip() else fallback


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}
