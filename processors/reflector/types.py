"""What a worker hands the Reflector and what it gets back (plain values, see the observer's types)."""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from processors.extraction.types import ExtractionFailure
from processors.observer.model_choice import DEFAULT_MODEL
from processors.model_port import Usage

DEFAULT_REFLECTOR_PROVIDER_OPTIONS: dict[str, Any] = {"google": {"thinkingConfig": {"thinkingBudget": 1024}}}


class ReflectorMode(str, Enum):
    SYNC = "sync"
    BACKGROUND = "background"
    MANUAL = "manual"


class ReflectorSettings(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    model: Any = DEFAULT_MODEL
    temperature: float | None = None
    max_output_tokens: int | None = None
    provider_options: dict[str, Any] | None = Field(
        default_factory=lambda: dict(DEFAULT_REFLECTOR_PROVIDER_OPTIONS)
    )
    observation_tokens: int = 40_000
    buffer_activation: float = 0.5
    instruction: str | None = None
    current_task: bool = True
    suggested_response: bool = True
    extractors: list[Any] = Field(default_factory=list, description="ExtractorSpec (custom only)")


class ReflectorRequest(BaseModel):
    """``observation_token_count`` is the record's count (computed when ``None``).

    Background mode reflects only the slice of §4.8; ``start_level`` overrides the per-model start.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    mode: ReflectorMode = ReflectorMode.SYNC
    observations: str
    observation_token_count: int | None = None
    prior_extracted: dict[str, Any] = Field(
        default_factory=dict, description="previous values by slug, built-ins (current-task, …) included"
    )
    guidance: str | None = None
    start_level: int | None = None
    target_tokens: int | None = Field(
        default=None, description="set when the caller already chose the slice: reflect it as given"
    )
    settings: ReflectorSettings = Field(default_factory=ReflectorSettings)


class ReflectorOutcome(BaseModel):
    """``error`` set ⇒ commit nothing (no generation, no buffered reflection)."""

    observations: str = ""
    token_count: int = 0
    input_token_count: int = 0
    reflected_line_count: int = 0
    target: int = 0
    reached_target: bool = False
    level: int | None = None
    levels_tried: list[int] = Field(default_factory=list)
    current_task: str | None = None
    suggested_response: str | None = None
    extracted: dict[str, Any] = Field(default_factory=dict)
    extraction_failures: list[ExtractionFailure] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    attempts: int = 0
    model: str = ""
    degenerate: bool = False
    error: str | None = None
