"""The OM record (one generation of one lookup key) and its buffered chunks — spec §3.1–3.2.

The record is what the processor folds events into and what ClickHouse materialises. Differences from
Mastra's row, all deliberate:

* ``buffered_chunks`` survive a new generation (Mastra drops them: the stranded-chunk bug P1).
* No durable ``is*`` flags: in-flight work lives in the processor state (one writer per key makes the
  flags' job — cross-process hints — unnecessary).
* Timestamps are UTC epoch milliseconds.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from schemas.base import VersionedModel, WireModel

Scope = Literal["thread", "resource"]
BOUNDARY_PREFIX = "\n\n--- message boundary ("
BOUNDARY_SUFFIX = ") ---\n\n"


class BufferedChunk(WireModel):
    """A background observation waiting for activation (spec §3.2)."""

    model_config = ConfigDict(frozen=True)
    id: str
    cycle_id: str
    observations: str
    token_count: int = Field(ge=0)
    message_ids: tuple[str, ...]
    message_tokens: int = Field(ge=0)
    last_observed_at: int = Field(description="max(created_at) of the observed messages + 1 ms")
    created_at: int
    thread_title: str | None = None
    extracted_values: dict[str, Any] | None = None
    extraction_failures: list[dict[str, Any]] | None = None


class ThreadMeta(WireModel):
    """What OM keeps per thread besides observations (spec §3.4): hints, title, extracted values."""

    model_config = ConfigDict(frozen=True)
    current_task: str | None = None
    suggested_response: str | None = None
    thread_title: str | None = None
    extracted: dict[str, Any] = Field(default_factory=dict)
    last_observed_at: int | None = None


class OMRecord(VersionedModel):
    """The head generation of a lookup key."""

    model_config = ConfigDict(frozen=True)
    kind: Literal["record"] = "record"
    id: str
    key: str
    scope: Scope
    thread_id: str | None = None  # resource scope; to_bytes drops None, so it needs a default
    resource_id: str
    generation: int = 0
    origin_type: Literal["initial", "reflection"] = "initial"
    active_observations: str = ""
    observation_token_count: int = 0
    total_tokens_observed: int = 0
    last_observed_at: int | None = Field(default=None, description="the cursor; never moves back")
    buffered_chunks: tuple[BufferedChunk, ...] = ()
    buffered_reflection: str | None = None
    buffered_reflection_tokens: int = 0
    buffered_reflection_input_tokens: int = 0
    reflected_observation_line_count: int = 0
    buffered_reflection_cycle_id: str | None = None
    last_buffered_at_tokens: int = 0
    last_buffered_at_time: int | None = None
    observed_timezone: str = "UTC"
    working_memory: str | None = Field(default=None, description="the Observer-managed working memory block")
    working_memory_version: int = 0
    config_overrides: dict[str, Any] = Field(default_factory=dict)
    created_at: int = 0
    updated_at: int = 0


def boundary(iso_timestamp: str) -> str:
    """The separator Mastra writes between observation cycles; context assembly splits on it."""
    return f"{BOUNDARY_PREFIX}{iso_timestamp}{BOUNDARY_SUFFIX}"
