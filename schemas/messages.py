"""The chat message event: what apps produce to the messages topic, one per message.

A message is keyed by its lookup key (``thread:<id>`` or ``resource:<id>``) and identified by
``id``; producing the same id twice is an *update* of that message, not a second message, which
is what makes producers' retries and backfill replays idempotent.

Parts follow Mastra's message format v2 (text, image, file, tool-invocation, reasoning,
step-start, ``data-*``) so that history exported from Mastra maps one to one.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import ConfigDict, Discriminator, Field, Tag, field_validator

from schemas.base import MAX_EPOCH_MS, VersionedModel, WireModel
from schemas.keys import Identifier

Role = Literal["user", "assistant", "system", "tool", "signal"]
ToolState = Literal[
    "partial-call",
    "call",
    "approval-requested",
    "approval-responded",
    "result",
    "output-error",
    "output-denied",
]


class PartBase(WireModel):
    """Parts tolerate fields we do not model: Mastra and the AI SDK add new ones often."""

    model_config = ConfigDict(extra="allow")
    created_at: int | None = Field(default=None, ge=0, le=MAX_EPOCH_MS, description="epoch ms of this part, if known")
    provider_metadata: dict[str, Any] | None = None

    def token_estimate(self) -> Any:
        """``providerMetadata.mastra.tokenEstimate``: a client-supplied estimate, or Mastra's cache."""
        mastra = (self.provider_metadata or {}).get("mastra") or {}
        return mastra.get("tokenEstimate") if isinstance(mastra, dict) else None


class TextPart(PartBase):
    type: Literal["text"] = "text"
    text: str


class ReasoningPart(PartBase):
    type: Literal["reasoning"] = "reasoning"
    text: str = ""


class ImagePart(PartBase):
    type: Literal["image"] = "image"
    image: str = Field(description="URL, data: URI or base64 payload")
    mime_type: str | None = None
    filename: str | None = None
    detail: Literal["low", "high", "auto"] | None = None


class FilePart(PartBase):
    type: Literal["file"] = "file"
    data: str = Field(description="URL, data: URI or base64 payload")
    mime_type: str = "application/octet-stream"
    filename: str | None = None


class ToolInvocationPart(PartBase):
    type: Literal["tool-invocation"] = "tool-invocation"
    tool_call_id: str
    tool_name: str
    state: ToolState = "call"
    args: Any = None
    result: Any = None
    error_text: str | None = None
    approval_reason: str | None = None

    @property
    def is_pending(self) -> bool:
        return self.state == "call"


class StepStartPart(PartBase):
    type: Literal["step-start"] = "step-start"
    model: str | None = Field(default=None, description="provider/modelId of the step's model")


class DataPart(PartBase):
    """``data-*`` parts (markers, app data): never sent to a model, never counted."""

    type: str
    data: Any = None

    @field_validator("type")
    @classmethod
    def _data_prefix(cls, value: str) -> str:
        if not value.startswith("data-"):
            raise ValueError(f"unknown part type {value!r}")
        return value


def _part_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    if isinstance(kind, str) and kind.startswith("data-"):
        return "data"
    return kind if isinstance(kind, str) else ""


Part = Annotated[
    Union[
        Annotated[TextPart, Tag("text")],
        Annotated[ReasoningPart, Tag("reasoning")],
        Annotated[ImagePart, Tag("image")],
        Annotated[FilePart, Tag("file")],
        Annotated[ToolInvocationPart, Tag("tool-invocation")],
        Annotated[StepStartPart, Tag("step-start")],
        Annotated[DataPart, Tag("data")],
    ],
    Discriminator(_part_tag),
]


class ChatMessage(VersionedModel):
    """One chat message. ``created_at`` is UTC epoch milliseconds (event time, not arrival time)."""

    kind: Literal["message"] = "message"
    id: Identifier
    thread_id: Identifier
    resource_id: Identifier | None = None
    role: Role
    created_at: int = Field(ge=0, le=MAX_EPOCH_MS)
    parts: list[Part] = Field(default_factory=list)
    model: str | None = Field(default=None, description="provider/modelId that produced this step")
    metadata: dict[str, Any] | None = None

    @property
    def owner(self) -> str:
        """The resource a thread-scoped message belongs to; Mastra falls back to the thread id."""
        return self.resource_id or self.thread_id

    def visible_parts(self) -> list[Any]:
        """Parts a model would see (``data-*`` and ``step-start`` are bookkeeping)."""
        return [p for p in self.parts if not isinstance(p, (DataPart, StepStartPart))]

    def has_pending_tool_call(self) -> bool:
        return any(isinstance(p, ToolInvocationPart) and p.is_pending for p in self.parts)

    def step_model(self) -> str | None:
        """The model of the newest ``step-start`` part, else the message's ``model`` field."""
        for part in reversed(self.parts):
            if isinstance(part, StepStartPart) and part.model:
                return part.model
        return self.model

    def last_activity_at(self) -> int:
        """``createdAt`` of the last non-``data-*`` part, falling back to the message's own."""
        for part in reversed(self.parts):
            if not isinstance(part, DataPart) and part.created_at is not None:
                return part.created_at
        return self.created_at
