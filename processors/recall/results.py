"""What recall answers, one model per mode (spec §8.3 "Returns").

Keys are camelCase (``hasNextPage``, ``nextCharOffset``) because agents read these names in the
recall instructions and in Mastra-era prompts; :meth:`RecallAnswer.to_dict` is the only place
that spelling is produced. Absent optional fields are left out rather than sent as null.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from processors.recall.request import Detail


class RecallAnswer(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True)


class MessagesAnswer(RecallAnswer):
    messages: str
    count: int
    cursor: str
    page: int
    limit: int
    detail: Detail
    has_next_page: bool = False
    has_prev_page: bool = False
    truncated: bool = False
    token_offset: int = 0


class PartAnswer(RecallAnswer):
    """One part at full detail, possibly one chunk of it (``nextCharOffset`` says where to go on)."""

    text: str
    message_id: str
    part_index: int
    role: str
    type: str
    truncated: bool
    char_offset: int
    next_char_offset: int | None = None
    note: str | None = None


class ThreadsAnswer(RecallAnswer):
    threads: str
    count: int
    page: int
    has_more: bool


class SearchAnswer(RecallAnswer):
    results: str
    count: int


class RecallError(Exception):
    """A request recall refuses; the message is written for the agent and names what to do instead.

    Messages never reveal whether an id exists under another resource: an unknown id and a
    foreign one get the same words.
    """
