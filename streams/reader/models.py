"""The HTTP API's request and response bodies; the OpenAPI document is generated from these."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from processors.context import AgentContext
from schemas.lifecycle import StatusEvent
from schemas.messages import ChatMessage


class ChatTurn(BaseModel):
    role: str
    content: str


class ContextResponse(BaseModel):
    """What the agent sends next: ``chat`` is ready for an OpenAI-style API; the rest is the detail."""

    thread_id: str
    resource_id: str
    system: list[str] = Field(description="system messages: preamble, <observations>, one per cycle, hints")
    continuation: ChatMessage | None = Field(description="the om-continuation reminder, when observations exist")
    messages: list[ChatMessage] = Field(description="unobserved messages (incl. temporal-gap signals), oldest first")
    chat: list[ChatTurn]
    observed_through: int | None = Field(
        default=None, description="the record's cursor (UTC epoch ms): messages up to it are in the observations")
    own_messages: list[str] = Field(
        default_factory=list, description="ids the client appended itself (sent, not yet materialised)")

    @classmethod
    def of(cls, thread_id: str, resource_id: str, context: AgentContext) -> ContextResponse:
        return cls(thread_id=thread_id, resource_id=resource_id, system=context.system,
                   continuation=context.continuation, messages=context.messages,
                   chat=[ChatTurn(**turn) for turn in context.as_chat()],
                   observed_through=context.observed_through)


class StatusResponse(BaseModel):
    thread_id: str
    resource_id: str
    status: StatusEvent | None = Field(description="the newest data-om-status event; null before the first step")


class RecallResponse(BaseModel):
    """Shaped by the recall tool (spec §8); passed through as the recall module returns it."""

    model_config = {"extra": "allow"}


class RecallRequest(BaseModel):
    model_config = {"extra": "allow"}
    resource_id: str | None = Field(default=None, description="required when the token reads several resources")


class ErrorResponse(BaseModel):
    error: str
    detail: Any = None
