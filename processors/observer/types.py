"""What a worker hands the Observer and what it gets back.

Plain values rather than ``OMConfig`` so the lead can map Kafka job payloads onto these models
one to one; :meth:`ObserverSettings.from_config` reads an ``ObservationConfig`` section.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

from processors.extraction.types import ExtractionFailure
from processors.observer.attachments import DEFAULT_OBSERVE_ATTACHMENTS
from processors.observer.model_choice import DEFAULT_MODEL
from processors.model_port import Usage
from processors.observer.tool_format import RESULT_TOKEN_LIMIT
from schemas.jobs import PendingReflection, PriorMetadata
from schemas.messages import ChatMessage

DEFAULT_OBSERVER_PROVIDER_OPTIONS: dict[str, Any] = {"google": {"thinkingConfig": {"thinkingBudget": 215}}}


class ObserverMode(str, Enum):
    SYNC = "sync"
    BUFFER = "buffer"
    MULTI_THREAD = "multi-thread"


class ObserverSettings(BaseModel):
    """The ``observation.*`` values one Observer call needs.

    ``model`` is a ``provider/model`` string, ``"default"``, or anything with ``resolve(n)``
    (``ModelByInputTokens``). ``temperature`` and ``max_output_tokens`` are sent as they are
    (``None``: not sent); :meth:`from_config` takes them from the config, where
    ``processors/config/roles.py`` filled in Mastra's role defaults.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model: Any = DEFAULT_MODEL
    temperature: float | None = None
    max_output_tokens: int | None = None
    provider_options: dict[str, Any] | None = Field(default_factory=lambda: dict(DEFAULT_OBSERVER_PROVIDER_OPTIONS))
    previous_observer_tokens: int | Literal[False] = 2000
    instruction: str | None = None
    current_task: bool = True
    suggested_response: bool = True
    thread_title: bool = False
    extractors: list[Any] = Field(default_factory=list, description="ExtractorSpec (custom only)")
    observe_attachments: Union[bool, Literal["auto"], list[str]] = Field(
        default_factory=lambda: list(DEFAULT_OBSERVE_ATTACHMENTS)
    )
    tool_result_tokens: int = RESULT_TOKEN_LIMIT
    max_tokens_per_batch: int = Field(default=10_000, gt=0, description="resource scope: tokens per call")

    @classmethod
    def from_config(cls, section: Any, model: Any = DEFAULT_MODEL) -> "ObserverSettings":
        """Read an ``ObservationConfig``-shaped object (attribute names as in the spec, snake_case)."""
        hints = getattr(section, "continuation_hints", True)
        settings = getattr(section, "model_settings", None)
        values: dict[str, Any] = {
            "model": getattr(section, "model", None) or model,
            "temperature": getattr(settings, "temperature", None),
            "max_output_tokens": getattr(settings, "max_output_tokens", None),
            "previous_observer_tokens": getattr(section, "previous_observer_tokens", 2000),
            "instruction": getattr(section, "instruction", None),
            "current_task": _hint(hints, "current_task"),
            "suggested_response": _hint(hints, "suggested_response"),
            "thread_title": getattr(section, "thread_title", False),
            "extractors": list(getattr(section, "extract", []) or []),
            "observe_attachments": getattr(section, "observe_attachments", list(DEFAULT_OBSERVE_ATTACHMENTS)),
            "max_tokens_per_batch": getattr(section, "max_tokens_per_batch", 10_000),
        }
        provider_options = getattr(section, "provider_options", None)
        if provider_options is not None:
            values["provider_options"] = provider_options
        return cls(**values)


class ThreadInput(BaseModel):
    thread_id: str
    messages: list[ChatMessage]
    prior: PriorMetadata = Field(default_factory=PriorMetadata)


class ObserverRequest(BaseModel):
    """``messages`` for sync/buffer; ``threads`` for multi-thread (resource scope)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    mode: ObserverMode = ObserverMode.SYNC
    messages: list[ChatMessage] = Field(default_factory=list)
    threads: list[ThreadInput] = Field(default_factory=list)
    prior_observations: str = ""
    buffered_observations: list[str] = Field(default_factory=list)
    pending_reflection: PendingReflection | None = None
    previous_truncated: bool = Field(default=False, description="the prior observations were cut before they "
                                     "came (the job's ``previous_truncated``): the Observer is told so")
    prior: PriorMetadata = Field(default_factory=PriorMetadata)
    settings: ObserverSettings = Field(default_factory=ObserverSettings)
    tz: str = "UTC"


class ThreadObservations(BaseModel):
    observations: str = ""
    current_task: str | None = None
    suggested_response: str | None = None
    thread_title: str | None = None
    extracted: dict[str, Any] = Field(default_factory=dict)
    extraction_failures: list[ExtractionFailure] = Field(default_factory=list)


class ObserverOutcome(ThreadObservations):
    """One Observer cycle. ``error`` set ⇒ nothing to commit; ``degenerate`` ⇒ skip the cycle
    and leave the messages unobserved ([main] behaviour), the model looped twice."""

    threads: dict[str, ThreadObservations] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    attempts: int = 0
    model: str = ""
    degenerate: bool = False
    previous_truncated: bool = False
    error: str | None = None


def _hint(hints: Any, name: str) -> bool:
    if isinstance(hints, bool):
        return hints
    value = getattr(hints, name, None)
    return True if value is None else bool(value)
