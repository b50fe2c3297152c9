"""``record-import``: an OM record brought over from Mastra's storage, as a control event (issue 22).

Migrating from Mastra keeps the memory users already have: the importer reads Mastra's head record
(spec §3.1), its earlier generations, the threads' OM metadata (§3.4) and working memory, and sends
them — with every message of the key — as ``record-import`` events on the control topic, keyed by the
lookup key. The core applies them like any event (``processors.machine.record_import``), so an import
is replayable and exactly-once; nothing writes the processor's state from outside.

Rules the event shape keeps:

* One import is ``parts`` events with the same ``import_id``, in order on the key's partition. Part 0
  carries the record; every part carries the next messages of the key in Mastra's order, split into
  those Mastra had observed and those it had not (§4.1) — a part stays well under a Kafka record.
* Messages travel *inside* the import, not on the messages topic: the control and messages topics
  are separate partitions with no order between them, and a message folded before the record would
  be observed again — the very cost the import exists to avoid.
* Times are UTC epoch ms, as everywhere on the wire.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from schemas.base import VersionedModel, WireModel
from schemas.keys import LookupKey
from schemas.messages import ChatMessage
from schemas.record import BufferedChunk, Scope, ThreadMeta


class ImportedGeneration(WireModel):
    """An earlier generation of the record (Mastra keeps one row per generation): history only."""

    generation: int = Field(ge=0)
    origin_type: Literal["initial", "reflection"] = "initial"
    active_observations: str = ""
    observation_token_count: int = Field(default=0, ge=0)
    last_observed_at: int | None = None
    created_at: int = 0
    updated_at: int = 0


class ImportedRecord(WireModel):
    """Mastra's head generation, in our record's vocabulary (``schemas.record.OMRecord``)."""

    scope: Scope
    thread_id: str | None = None
    resource_id: str
    source_record_id: str = Field(description="Mastra's record id, for the audit trail")
    generation: int = Field(ge=0)
    origin_type: Literal["initial", "reflection"] = "initial"
    active_observations: str = ""
    observation_token_count: int = Field(default=0, ge=0)
    total_tokens_observed: int = Field(default=0, ge=0)
    last_observed_at: int | None = None
    pending_message_tokens: int = Field(default=0, ge=0)
    buffered_chunks: tuple[BufferedChunk, ...] = ()
    buffered_reflection: str | None = None
    buffered_reflection_tokens: int = Field(default=0, ge=0)
    buffered_reflection_input_tokens: int = Field(default=0, ge=0)
    reflected_observation_line_count: int = Field(default=0, ge=0)
    last_buffered_at_tokens: int = Field(default=0, ge=0)
    last_buffered_at_time: int | None = None
    observed_timezone: str = "UTC"
    working_memory: str | None = None
    threads: dict[str, ThreadMeta] = Field(default_factory=dict, description="hints, title, extracted, per thread")
    history: tuple[ImportedGeneration, ...] = ()
    created_at: int = 0
    updated_at: int = 0


class RecordImport(VersionedModel):
    kind: Literal["record-import"] = "record-import"
    at: int = Field(ge=0, description="UTC epoch ms: the head record's updatedAt")
    key: LookupKey
    import_id: str = Field(min_length=1, description="the same for every part of one import")
    part: int = Field(ge=0)
    parts: int = Field(gt=0)
    record: ImportedRecord | None = Field(default=None, description="on part 0 only")
    observed: list[ChatMessage] = Field(default_factory=list, description="messages Mastra had observed")
    unobserved: list[ChatMessage] = Field(default_factory=list, description="messages still in its window")
