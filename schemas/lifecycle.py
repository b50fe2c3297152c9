"""Lifecycle events on the events topic: the ``data-om-*`` parts of spec §6, one model each.

The processor emits them as effects of its fold; the sink stores them and the reader serves them,
so an app can render Mastra's progress UI or rebuild the marker parts Mastra persists on assistant
messages (:attr:`LifecycleBase.part_type` gives ``data-om-<type>``).

Differences from Mastra's part data, all deliberate:

* Field names are snake_case; every §6 ISO-8601 string (``started_at``, ``completed_at``,
  ``failed_at``, ``activated_at``, ``thread-update``'s ``timestamp``) is UTC epoch ms here, like
  every other time on our topics, so ordering and durations need no parsing.
* Every event carries its lookup ``key`` (the Kafka key), ``resource_id`` and ``at`` (event time).
  ``thread_id`` is None in resource scope.
* Mastra's ``generationCount`` is ``generation`` (the record's name for it); the old spelling is
  still accepted on input.
* ``status`` adds ``applied_through`` so a reader can wait until the record has folded a message it
  just wrote (read-your-writes); ``observation-end``, ``buffering-end`` and ``activation`` add the
  ids of the messages they cover, which is how "nothing is lost" is checked end to end.
* ``observation-end`` and ``buffering-end`` add the parser's ``warnings`` about the model's answer
  (a repaired block, missing markers), so a weak model's trouble shows where its output does.
* A synchronous reflection's ``observation-start`` and ``observation-end`` carry the trigger fields
  Mastra puts on ``activation`` only: an idle or provider-change trigger may reflect below the
  threshold, and the events should say so.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import AliasChoices, Discriminator, Field, Tag

from schemas.base import VersionedModel, WireModel
from schemas.keys import LookupKey
from schemas.record import Scope
from schemas.tagged import decode_tagged, members_by_tag, tag_reader

OperationType = Literal["observation", "reflection"]
BufferStatus = Literal["idle", "running", "complete"]
ActivationTrigger = Literal["threshold", "ttl", "provider_change"]
Tokens = Annotated[int, Field(ge=0)]
Count = Annotated[int, Field(ge=0)]
EpochMs = Annotated[int, Field(ge=0)]
DurationMs = Annotated[int, Field(ge=0)]
Generation = Annotated[
    int,
    Field(ge=0, validation_alias=AliasChoices("generation", "generation_count", "generationCount")),
]


class MarkerConfig(WireModel):
    """The thresholds in force when the event was emitted (Mastra's ``ObservationMarkerConfig``)."""

    message_tokens: Tokens
    observation_tokens: Tokens
    scope: Scope
    activate_after_idle: EpochMs | Literal["auto"] | None = Field(
        default=None, description="resolved idle TTL in ms, or 'auto' (resolved per actor model)"
    )


class ExtractionFailure(WireModel):
    slug: str
    error: str


class LifecycleBase(VersionedModel):
    key: LookupKey
    thread_id: str | None = Field(default=None, min_length=1)
    resource_id: str = Field(min_length=1)
    record_id: str = Field(min_length=1)
    at: EpochMs = Field(description="UTC epoch ms, event time")

    @property
    def part_type(self) -> str:
        """Mastra's part type for this event, e.g. ``data-om-buffering-end``."""
        return f"data-om-{getattr(self, 'type')}"


class CycleEvent(LifecycleBase):
    """An event about one Observer/Reflector cycle; the cycle id ties start, end and activation."""

    cycle_id: str = Field(min_length=1)
    operation_type: OperationType


class CoveredMessages(WireModel):
    """Which messages a cycle covered: ``range`` is ``"<firstId>:<lastId>"`` as in recall cursors."""

    message_ids: list[str] = Field(default_factory=list)
    range: str | None = Field(default=None, pattern=r"^.+:.+$")


class Trigger(WireModel):
    """Why an activation or a synchronous reflection happened now (spec §4.7, §4.8).

    ``threshold``, or an early ``ttl`` / ``provider_change`` trigger: the provider's prompt cache
    went cold, so rewriting the prompt prefix costs nothing extra. The idle time or the model switch
    that made it cold comes along, so a reader can tell an early cycle from a forced one.
    """

    triggered_by: ActivationTrigger | None = None
    last_activity_at: EpochMs | None = None
    ttl_expired_ms: DurationMs | None = None
    previous_model: str | None = None
    current_model: str | None = None


class Extraction(WireModel):
    """What came out of the answer besides the observations, and what the parser had to say about
    it (``warnings``: an unclosed block, missing markers; ours, not Mastra's; None = nothing)."""

    extracted_values: dict[str, Any] | None = None
    extraction_failures: list[ExtractionFailure] | None = None
    warnings: list[str] | None = None


# --- data-om-status -------------------------------------------------------------------------


class TokenWindow(WireModel):
    tokens: Tokens
    threshold: Tokens


class ActiveWindows(WireModel):
    messages: TokenWindow
    observations: TokenWindow


class BufferedObservationsWindow(WireModel):
    chunks: Count
    message_tokens: Tokens = Field(description="min(sum of chunk message tokens, pending tokens)")
    projected_message_removal: Tokens
    observation_tokens: Tokens = Field(description="sum of chunk token counts")
    status: BufferStatus


class BufferedReflectionWindow(WireModel):
    input_observation_tokens: Tokens
    observation_tokens: Tokens
    status: BufferStatus


class BufferedWindows(WireModel):
    observations: BufferedObservationsWindow
    reflection: BufferedReflectionWindow


class StatusWindows(WireModel):
    active: ActiveWindows
    buffered: BufferedWindows


class AppliedThrough(WireModel):
    """The newest message the record has folded, so a reader knows its own write is in."""

    message_id: str = Field(min_length=1)
    created_at: EpochMs


class StatusEvent(LifecycleBase):
    """The decision snapshot after each step (spec §4.2); transient in Mastra, stored here."""

    type: Literal["status"] = "status"
    windows: StatusWindows
    generation: Generation
    step_number: int | None = Field(default=None, ge=0)
    applied_through: AppliedThrough | None = None


# --- synchronous cycles ----------------------------------------------------------------------


class ObservationStart(CycleEvent, Trigger):
    """For a reflection, the :class:`Trigger` says why it ran (an early one may run below ``R``)."""

    type: Literal["observation-start"] = "observation-start"
    started_at: EpochMs
    tokens_to_observe: Tokens
    thread_ids: list[str] = Field(default_factory=list)
    config: MarkerConfig


class ObservationEnd(CycleEvent, CoveredMessages, Extraction, Trigger):
    """For a reflection: ``observation_tokens`` is the new total, not this cycle's output, and the
    :class:`Trigger` repeats the start's."""

    type: Literal["observation-end"] = "observation-end"
    completed_at: EpochMs
    duration_ms: DurationMs
    tokens_observed: Tokens
    observation_tokens: Tokens
    observations: str | None = None
    current_task: str | None = None
    suggested_response: str | None = None


class CycleFailure(CycleEvent):
    """Shared by sync and background failures: Mastra gives both the same fields (spec §6)."""

    failed_at: EpochMs
    duration_ms: DurationMs
    tokens_attempted: Tokens
    error: str
    observations: str | None = None
    retrying: bool | None = None


class ObservationFailed(CycleFailure):
    type: Literal["observation-failed"] = "observation-failed"


# --- background cycles ------------------------------------------------------------------------


class BufferingStart(CycleEvent):
    type: Literal["buffering-start"] = "buffering-start"
    started_at: EpochMs
    tokens_to_buffer: Tokens
    thread_ids: list[str] = Field(default_factory=list)
    config: MarkerConfig


class BufferingEnd(CycleEvent, CoveredMessages, Extraction):
    """``buffered_tokens`` is the output size of *all* buffered chunks, as Mastra reports it."""

    type: Literal["buffering-end"] = "buffering-end"
    completed_at: EpochMs
    duration_ms: DurationMs
    tokens_buffered: Tokens
    buffered_tokens: Tokens
    observations: str | None = None


class BufferingFailed(CycleFailure):
    type: Literal["buffering-failed"] = "buffering-failed"


class Activation(CycleEvent, CoveredMessages, Trigger):
    """One activated chunk or buffered reflection (for a reflection: tokens before and after).

    ``cycle_id`` is the buffering cycle that produced what is activated, not a new one.
    """

    type: Literal["activation"] = "activation"
    activated_at: EpochMs
    chunks_activated: Count
    tokens_activated: Tokens
    observation_tokens: Tokens
    messages_activated: Count
    generation: Generation
    config: MarkerConfig
    observations: str | None = None


class ObservationLatched(LifecycleBase):
    """Ours, not Mastra's: the Observer failed or made no progress ``failures`` times in a row, so
    no new Observer cycle starts for this key before ``retry_at`` (event time); the messages wait in
    the window, and the agent's context still has them."""

    type: Literal["observation-latched"] = "observation-latched"
    cycle_id: str = Field(min_length=1, description="the last failed cycle")
    failures: Count
    error: str
    retry_at: EpochMs


class BudgetExceeded(LifecycleBase):
    """Ours: the resource is over its daily token budget, so no new Observer or Reflector cycle starts
    for this key until ``budget-restored``; messages keep entering the window and the context."""

    type: Literal["budget-exceeded"] = "budget-exceeded"
    day: str
    used_tokens: Count
    limit_tokens: Count


class BudgetRestored(LifecycleBase):
    """Ours: the budget allows cycles again (a new day, or a larger budget); what waited starts."""

    type: Literal["budget-restored"] = "budget-restored"
    day: str
    used_tokens: Count
    limit_tokens: Count


class ThreadUpdate(LifecycleBase):
    """OM renamed a thread; ``timestamp`` (epoch ms) is when the Observer produced the title."""

    type: Literal["thread-update"] = "thread-update"
    thread_id: str = Field(min_length=1)
    cycle_id: str = Field(min_length=1)
    old_title: str | None = None
    new_title: str = Field(min_length=1)
    timestamp: EpochMs


LifecycleEvent = Annotated[
    Union[
        Annotated[StatusEvent, Tag("status")],
        Annotated[ObservationStart, Tag("observation-start")],
        Annotated[ObservationEnd, Tag("observation-end")],
        Annotated[ObservationFailed, Tag("observation-failed")],
        Annotated[BufferingStart, Tag("buffering-start")],
        Annotated[BufferingEnd, Tag("buffering-end")],
        Annotated[BufferingFailed, Tag("buffering-failed")],
        Annotated[Activation, Tag("activation")],
        Annotated[ThreadUpdate, Tag("thread-update")],
        Annotated[ObservationLatched, Tag("observation-latched")],
        Annotated[BudgetExceeded, Tag("budget-exceeded")],
        Annotated[BudgetRestored, Tag("budget-restored")],
    ],
    Discriminator(tag_reader("type")),
]

_EVENT_TYPES = members_by_tag(LifecycleEvent)


def decode_event(data: bytes | str) -> LifecycleEvent:
    """Bytes from the events topic to an event, or :class:`SchemaError` naming the bad field."""
    return decode_tagged(data, "type", _EVENT_TYPES)  # type: ignore[return-value]
