"""The per-role option groups of the OM config: ``observation``, ``reflection``, ``retrieval``.

Options whose default depends on other options (buffering knobs, model settings) are kept as the
user wrote them, with ``None`` meaning "not set": whether the user set them changes behaviour
(resource scope, shareTokenBudget wording, §2.3–2.4). Their effective values live in
``OMConfig.resolved``. Each section checks only what it can judge alone; rules across sections
live in ``processors/config/resolve.py``.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from processors.config.base import ConfigModel, Count, Number, NumberOrFalse
from processors.config.extractor_spec import WORKING_MEMORY_SLUG, ExtractorSpec, check_unique_slugs
from processors.config.model_tiers import ModelByInputTokens
from processors.config.ttl import parse_activation_ttl

ModelChoice = str | ModelByInputTokens
IdleSetting = int | Literal["auto", False] | None


class ModelSettings(ConfigModel):
    """Sampling settings for one role; ``None`` = let the provider decide.

    ``api_base``/``api_key_env`` are ours: where this role's model is served (the worker resolves
    them, see streams/llm/endpoints.py); the core never reads them."""

    temperature: Number | None = None
    max_output_tokens: Count | None = Field(default=None, gt=0)
    api_base: str | None = Field(default=None, min_length=1, description=(
        "not a Mastra option: base URL of an OpenAI-compatible server for this role; "
        "None = OM_MODEL_API_BASE"))
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description=(
        "not a Mastra option: the environment variable holding this role's API key (the key itself "
        "never goes into a config file); None = OM_MODEL_API_KEY"))


class ContinuationHints(ConfigModel):
    """Which built-in hint sections the Observer writes (spec §5.6)."""

    current_task: bool = True
    suggested_response: bool = True


def _google_thinking_budget(tokens: int) -> dict[str, Any]:
    return {"google": {"thinkingConfig": {"thinkingBudget": tokens}}}


class _RoleSection(ConfigModel):
    """What the Observer and Reflector sections have in common."""

    _PATH: ClassVar[str]
    model: ModelChoice | None = None
    model_settings: ModelSettings = ModelSettings()
    activate_after_idle: IdleSetting = None
    instruction: str | None = None
    continuation_hints: bool | ContinuationHints = True
    extract: list[ExtractorSpec] = []

    @field_validator("activate_after_idle", mode="before")
    @classmethod
    def _parse_idle(cls, value: Any) -> Any:
        parsed = parse_activation_ttl(value, f"{cls._PATH}.activate_after_idle")
        return False if value is False else parsed

    @field_validator("extract")
    @classmethod
    def _unique_extractors(cls, specs: list[ExtractorSpec]) -> list[ExtractorSpec]:
        check_unique_slugs(specs)
        return specs


class ObservationConfig(_RoleSection):
    """The Observer: when to observe, when to buffer in the background, what to extract."""

    _PATH: ClassVar[str] = "observation"

    message_tokens: Count = Field(default=30_000, gt=0)
    provider_options: dict[str, Any] = _google_thinking_budget(215)
    max_tokens_per_batch: Count = Field(default=10_000, gt=0)
    buffer_tokens: NumberOrFalse | None = None
    buffer_on_idle: bool = False
    buffer_activation: Number | None = None
    block_after: Number | None = None
    activate_on_provider_change: bool | None = None
    previous_observer_tokens: Count | Literal[False] = 2000
    thread_title: bool = False
    manage_working_memory: bool = False
    working_memory_template: str | None = None  # Markdown; processors/extraction/working_memory.py has the default
    observe_attachments: Literal["auto"] | bool | list[str] = ["image/*", "application/pdf"]
    # Ours, not Mastra's (it retries on every step): an Observer that keeps failing is latched
    # (processors/machine/observer_latch.py). 0 = never latch.
    max_failed_cycles: int = Field(default=5, ge=0)
    latch_retry_ms: int = Field(default=3_600_000, gt=0)

    @field_validator("previous_observer_tokens", mode="before")
    @classmethod
    def _check_previous_observer_tokens(cls, value: Any) -> Any:
        is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if value is not False and not (is_number and math.isfinite(value) and value >= 0):
            raise ValueError(
                f"observation.previous_observer_tokens must be false or a finite number >= 0; "
                f"got {value!r}"
            )
        return value

    @model_validator(mode="after")
    def _working_memory_slug_is_taken(self) -> ObservationConfig:
        if self.manage_working_memory:
            check_unique_slugs(self.extract, taken=[WORKING_MEMORY_SLUG])
        return self


class ReflectionConfig(_RoleSection):
    """The Reflector: when the observation log is rewritten shorter, in the background or inline."""

    _PATH: ClassVar[str] = "reflection"

    observation_tokens: Count = Field(default=40_000, gt=0)
    provider_options: dict[str, Any] = _google_thinking_budget(1024)
    buffer_activation: Number | None = None
    block_after: Number | None = None
    activate_on_provider_change: bool = False


class RetrievalConfig(ConfigModel):
    """The ``recall`` tool and observation-group provenance (spec §8)."""

    vector: bool = False
    scope: Literal["thread", "resource"] = "resource"
    instructions: str | None = None
    embedder: str | None = None

    @model_validator(mode="after")
    def _vector_needs_embedder(self) -> RetrievalConfig:
        if self.vector and not self.embedder:
            raise ValueError(
                "retrieval.vector: true requires retrieval.embedder (an embedding model name, "
                "e.g. 'openai/text-embedding-3-small')"
            )
        return self
