"""The recall tool's input (spec §8.2): one validated request, whatever spelling the agent used.

Agents send Mastra's camelCase names (``threadId``, ``partIndex``); snake_case works too. Bounds
are checked here so that the reader never sees a page of 10 000 or a negative offset; the two
values Mastra *clamps* instead of refusing are accepted and clamped where they are used:
``page: 0`` reads as page 1 in messages mode, and ``limit`` up to 50 is accepted because threads
mode lists up to 50 while messages mode caps pages at 20 (scenario 57).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Literal

from pydantic import Field, field_validator

from schemas.base import WireModel

Mode = Literal["messages", "threads", "search"]
Detail = Literal["low", "high"]
PartType = Literal["text", "tool-call", "tool-result", "reasoning", "image", "file"]
CURRENT_THREAD = "current"
MAX_PAGE = 50
MAX_MESSAGE_LIMIT = 20
MAX_THREAD_LIMIT = 50


class RecallRequest(WireModel):
    """One recall call. ``before``/``after`` become UTC epoch milliseconds."""

    mode: Mode = "messages"
    query: str | None = Field(default=None, min_length=1)
    cursor: str | None = Field(default=None, min_length=1)
    thread_id: str | None = Field(default=None, min_length=1, description='a thread id, or "current"')
    anchor: Literal["start", "end"] = "start"
    page: int | None = Field(default=None, ge=-MAX_PAGE, le=MAX_PAGE)
    limit: int | None = Field(default=None, ge=1, le=MAX_THREAD_LIMIT)
    detail: Detail = "low"
    part_type: PartType | None = None
    tool_name: str | None = Field(default=None, min_length=1)
    part_index: int | None = Field(default=None, ge=0)
    char_offset: int | None = Field(default=None, ge=0)
    before: int | None = Field(default=None, description="UTC epoch ms; from an ISO 8601 date or date-time")
    after: int | None = Field(default=None, description="UTC epoch ms; from an ISO 8601 date or date-time")

    @field_validator("before", "after", mode="before")
    @classmethod
    def _parse_date(cls, value: object) -> object:
        return parse_date_ms(value) if isinstance(value, str) else value

    @property
    def wants_current_thread(self) -> bool:
        return self.thread_id == CURRENT_THREAD

    def explicit_thread(self, current_thread_id: str | None) -> str | None:
        """The thread the agent named, with ``"current"`` resolved."""
        return current_thread_id if self.wants_current_thread else self.thread_id


def parse_date_ms(text: str) -> int:
    """``2026-03-15`` or ``2026-03-10T00:00:00Z`` (offsets honoured, naive = UTC) → epoch ms."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError as error:
        raise ValueError(f"expected an ISO 8601 date such as 2026-03-15 or 2026-03-10T00:00:00Z, got {text!r}") from error
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp() * 1000)
