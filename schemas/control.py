"""Control events: the facts besides chat messages that move an OM record's state machine.

They travel on the control topic keyed by the lookup key, like messages, so the owner of a record
sees them in order with that record's messages. Time enters the sans-IO core only through these
events: ``at`` is UTC epoch ms *event* time (for ``idle-tick``, the timer's now), never the clock
of whoever decodes them.

Mastra learns the same facts from its processor hooks (spec §4.3 turn lifecycle, §4.7 idle and
provider-change activation, §2.1 ``updateRecordConfig``); here they are explicit events so that a
replay of the log reproduces every decision. ``record-import`` (:mod:`schemas.record_import`) brings a
record over from Mastra's storage the same way.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import AliasChoices, ConfigDict, Discriminator, Field, Tag
from typing_extensions import TypedDict

from schemas.base import MAX_EPOCH_MS, VersionedModel
from schemas.keys import Identifier, LookupKey
from schemas.record_import import RecordImport
from schemas.tagged import decode_tagged, members_by_tag, tag_reader

ModelId = Annotated[str, Field(pattern=r"^[^/\s]+/\S+$", description='"provider/modelId"')]
PositiveTokens = Annotated[int, Field(gt=0)]


class ControlBase(VersionedModel):
    at: int = Field(ge=0, le=MAX_EPOCH_MS, description="UTC epoch ms, event time")


class ThreadControl(ControlBase):
    """A control event about one thread; ``resource_id`` falls back to the thread id, as in Mastra."""

    thread_id: Identifier
    resource_id: Identifier | None = None


class TurnStart(ThreadControl):
    """An agent turn begins; ``model`` is the actor model, which drives ``'auto'`` idle TTLs."""

    kind: Literal["turn-start"] = "turn-start"
    model: ModelId


class TurnEnd(ThreadControl):
    """The turn finished: the moment Mastra persists and, with ``bufferOnIdle``, buffers."""

    kind: Literal["turn-end"] = "turn-end"


class IdleTick(ControlBase):
    """A timer fired for ``key``; ``at`` is the timer's now, so idle TTLs are judged in event time."""

    kind: Literal["idle-tick"] = "idle-tick"
    key: LookupKey


class ProviderChange(ThreadControl):
    """The actor model changed to ``model``: with ``activateOnProviderChange``, activate early."""

    kind: Literal["provider-change"] = "provider-change"
    model: ModelId


class ThreadDeleted(ThreadControl):
    """The thread is gone: its record stops accepting work (Mastra's deleted-thread write guard)."""

    kind: Literal["thread-deleted"] = "thread-deleted"


class ObservationOverride(TypedDict, total=False):
    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]
    message_tokens: Annotated[
        PositiveTokens, Field(validation_alias=AliasChoices("message_tokens", "messageTokens"))
    ]


class ReflectionOverride(TypedDict, total=False):
    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]
    observation_tokens: Annotated[
        PositiveTokens,
        Field(validation_alias=AliasChoices("observation_tokens", "observationTokens")),
    ]


class RecordConfigOverride(TypedDict, total=False):
    """The only per-record overrides Mastra reads (spec §2.1); anything else is refused, not kept."""

    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]
    observation: ObservationOverride
    reflection: ReflectionOverride


class ConfigOverride(ThreadControl):
    """``updateRecordConfig``: ``config`` is deep-merged into the record's overrides by the fold.

    ``config`` stays a plain dict (snake_case keys after decoding) because deep-merging is a dict
    operation; its shape is still checked here so a typo fails at the edge, with its path named.
    """

    kind: Literal["config-override"] = "config-override"
    config: RecordConfigOverride


class BudgetChange(ControlBase):
    """Ours: the resource that owns ``key`` is over its daily token budget (``exceeded``), or allowed
    again. Sent by the sink, which sums the cost ledger (streams/sink/budget.py); the key applies it
    at its own clock, so ``at`` (the sink's wall clock) never moves the key's event time."""

    kind: Literal["budget"] = "budget"
    key: LookupKey
    resource_id: Identifier = Field(description="whose budget: a key another resource owns ignores it")
    exceeded: bool
    day: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="the UTC day the figures are for")
    used_tokens: int = Field(ge=0, description="the resource's model tokens that day (input + output)")
    limit_tokens: int = Field(gt=0, description="daily_token_budget")


ControlEvent = Annotated[
    Union[
        Annotated[TurnStart, Tag("turn-start")],
        Annotated[TurnEnd, Tag("turn-end")],
        Annotated[IdleTick, Tag("idle-tick")],
        Annotated[ProviderChange, Tag("provider-change")],
        Annotated[ThreadDeleted, Tag("thread-deleted")],
        Annotated[ConfigOverride, Tag("config-override")],
        Annotated[RecordImport, Tag("record-import")],
        Annotated[BudgetChange, Tag("budget")],
    ],
    Discriminator(tag_reader("kind")),
]

_CONTROL_KINDS = members_by_tag(ControlEvent)


def decode_control(data: bytes | str) -> ControlEvent:
    """Bytes from the control topic to an event, or :class:`SchemaError` naming the bad field."""
    return decode_tagged(data, "kind", _CONTROL_KINDS)  # type: ignore[return-value]
