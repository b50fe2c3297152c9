"""Materialisation deltas: what the processor tells ClickHouse, on the records topic.

Every delta carries ``version`` — the key's applied-event counter — so that the ClickHouse tables
(ReplacingMergeTree on version) keep the newest state however often a delta is redelivered.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import Discriminator, Field, Tag

from schemas.base import VersionedModel
from schemas.messages import ChatMessage
from schemas.record import BufferedChunk, OMRecord, ThreadMeta
from schemas.tagged import decode_tagged, members_by_tag


class RecordSnapshot(VersionedModel):
    """The head generation after a change, plus per-thread metadata and the unobserved window ids."""

    kind: Literal["record-snapshot"] = "record-snapshot"
    key: str
    version: int
    at: int
    record: OMRecord
    threads: dict[str, ThreadMeta] = Field(default_factory=dict)
    pending_message_tokens: int = 0
    unobserved_message_ids: list[str] = Field(default_factory=list)


class MessagesObserved(VersionedModel):
    """Messages that left the unobserved window: covered by the observation of ``cycle_id``."""

    kind: Literal["messages-observed"] = "messages-observed"
    key: str
    version: int
    at: int
    cycle_id: str
    generation: int
    message_ids: list[str]
    range: str = Field(description="'<first id>:<last id>' in time order")


class ChunkChanged(VersionedModel):
    """A buffered chunk was stored, activated or dropped (stale)."""

    kind: Literal["chunk"] = "chunk"
    key: str
    version: int
    at: int
    generation: int
    status: Literal["buffered", "activated", "dropped"]
    chunk: BufferedChunk


class MessageInserted(VersionedModel):
    """A message the core itself added to the thread (a temporal-gap reminder, an imported one): it
    is part of the conversation the agent sees, so it is materialised like a produced message.

    ``observed``: the message as it was when it left the window (or was imported as observed). Its
    row outranks every row from the messages topic, so an id re-sent with other content after it
    was observed — a duplicate the core ignores — never replaces what the memory was built from."""

    kind: Literal["message-inserted"] = "message-inserted"
    key: str
    version: int
    at: int
    message: ChatMessage
    observed: bool = False


class MessageRefused(VersionedModel):
    """A messages-topic record the sink stores by its record alone but the processor refused (a
    thread another resource owns, an event time too far ahead, a late message it dropped): the sink
    hides the stored row, so the reader never serves it. ``version`` is the record's offset on the
    messages topic; the refusal outranks that record's row and nothing later (a valid re-send of
    the id is stored again). ``held``: the message the core still holds unobserved under that id (the
    refused record was a re-send of it) — the row returns to it instead of being hidden."""

    kind: Literal["message-refused"] = "message-refused"
    key: str
    version: int
    at: int
    message_id: str
    thread_id: str
    owner: str = Field(description="the stored row's resource_id: the message's resource, or its thread id")
    held: ChatMessage | None = None


class KeyDeleted(VersionedModel):
    """A thread (or resource) was deleted: the sink removes its rows, the processor its state."""

    kind: Literal["key-deleted"] = "key-deleted"
    key: str
    version: int
    at: int
    thread_id: str | None = None  # resource scope; to_bytes drops None, so it needs a default
    resource_id: str


def _kind(value: Any) -> str:
    return value.get("kind", "") if isinstance(value, dict) else getattr(value, "kind", "")


Delta = Annotated[
    Union[
        Annotated[RecordSnapshot, Tag("record-snapshot")],
        Annotated[MessagesObserved, Tag("messages-observed")],
        Annotated[ChunkChanged, Tag("chunk")],
        Annotated[KeyDeleted, Tag("key-deleted")],
        Annotated[MessageInserted, Tag("message-inserted")],
        Annotated[MessageRefused, Tag("message-refused")],
    ],
    Discriminator(_kind),
]


_DELTA_TYPES = members_by_tag(Delta)


def decode_delta(data: bytes | str) -> Delta:
    """Bytes from the records topic to a delta, or :class:`SchemaError` naming the bad field."""
    return decode_tagged(data, "kind", _DELTA_TYPES)  # type: ignore[return-value]
