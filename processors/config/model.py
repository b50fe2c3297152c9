"""The one configuration model of Observational Memory: Mastra's options, Mastra's defaults.

Theory of operation: :class:`OMConfig` is validated once, when it is built. Every rule of spec §2.8
that a config can break is checked then and raises a ``ValueError`` (pydantic's
``ValidationError``) naming the option, so a bad config stops a deployment instead of a thread.
The encodings of the buffering knobs are decoded at the same moment into :attr:`OMConfig.resolved`
(token counts only), and the role defaults are filled into each section's ``model_settings``. The
config is frozen, so neither can drift afterwards.

Where this goes beyond Mastra: ``token_counter``, ``timezone`` (the zone Observer dates are
written in; Mastra uses the host's) and ``daily_token_budget`` (model tokens one resource may spend
per UTC day). In-flight jobs are never abandoned on a timer: a worker always
answers (a failure is an answer) because jobs are redelivered until a result is published.
"""

from __future__ import annotations

from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import orjson
from pydantic import PositiveInt, PrivateAttr, field_validator, model_validator

from processors.config.base import ConfigModel
from processors.config.resolve import ResolvedConfig, resolve_config
from processors.config.roles import (
    DEFAULT_MODEL,
    OBSERVER_TEMPERATURE,
    REFLECTOR_TEMPERATURE,
    configured_model,
    role_model,
    with_role_defaults,
)
from processors.config.sections import (
    ContinuationHints,
    IdleSetting,
    ModelChoice,
    ModelSettings,
    ObservationConfig,
    ReflectionConfig,
    RetrievalConfig,
)
from processors.config.extractor_spec import ExtractorSpec
from processors.config.model_tiers import ModelByInputTokens
from processors.config.thresholds import (
    dynamic_threshold,
    effective_message_tokens,
    effective_reflection_tokens,
)
from processors.config.ttl import parse_activation_ttl

__all__ = [
    "DEFAULT_MODEL",
    "ContinuationHints",
    "ExtractorSpec",
    "ModelByInputTokens",
    "ModelSettings",
    "OMConfig",
    "ObservationConfig",
    "ReflectionConfig",
    "ResolvedConfig",
    "RetrievalConfig",
    "dynamic_threshold",
    "effective_message_tokens",
    "effective_reflection_tokens",
]


class OMConfig(ConfigModel):
    """Observational Memory options for one agent (Mastra's ``observationalMemory`` object)."""

    enabled: bool = True
    model: ModelChoice | None = None
    scope: Literal["thread", "resource"] = "thread"
    share_token_budget: bool = False
    temporal_markers: bool = False
    activate_after_idle: IdleSetting = None
    activate_on_provider_change: bool = False
    retrieval: bool | RetrievalConfig = False
    read_only: bool = False
    obscure_thread_ids: bool = False
    observation: ObservationConfig = ObservationConfig()
    reflection: ReflectionConfig = ReflectionConfig()
    token_counter: Literal["tokenx", "o200k_base", "cl100k_base"] = "tokenx"
    timezone: str = "UTC"
    daily_token_budget: PositiveInt | None = None  # ours: per resource and UTC day (processors/machine/budget.py)

    _resolved: ResolvedConfig = PrivateAttr()

    @field_validator("activate_after_idle", mode="before")
    @classmethod
    def _parse_idle(cls, value: Any) -> Any:
        return parse_activation_ttl(value, "activate_after_idle")

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(
                f"timezone {value!r} is not an IANA time zone like 'Europe/Paris'"
            ) from None
        return value

    @model_validator(mode="after")
    def _resolve(self) -> OMConfig:
        for section in ("observation", "reflection"):
            if self.model is not None and getattr(self, section).model is not None:
                raise ValueError(
                    f"cannot set both model and {section}.model; use model for both roles or "
                    "set observation.model and reflection.model separately"
                )
        self._resolved = resolve_config(self)
        observation = self.observation.model_copy(
            update={
                "model_settings": with_role_defaults(
                    self.observation.model_settings, self._observer_choice(), OBSERVER_TEMPERATURE
                )
            }
        )
        reflection = self.reflection.model_copy(
            update={
                "model_settings": with_role_defaults(
                    self.reflection.model_settings, self._reflector_choice(), REFLECTOR_TEMPERATURE
                )
            }
        )
        self._derive(observation=observation, reflection=reflection)
        return self

    @property
    def resolved(self) -> ResolvedConfig:
        """The thresholds in tokens, decoded once at construction.

        Read several times per event by the core: straight from pydantic's private-attribute dict,
        which skips ``BaseModel.__getattr__`` (the attribute is set once, in ``_resolve``)."""
        return self.__pydantic_private__["_resolved"]

    def _observer_choice(self) -> ModelChoice | None:
        return configured_model(self.observation.model, self.model, self.reflection.model)

    def _reflector_choice(self) -> ModelChoice | None:
        return configured_model(self.reflection.model, self.model, self.observation.model)

    def observer_model(self) -> ModelChoice:
        """The Observer's model: observation.model → model → reflection.model → default."""
        return role_model(self._observer_choice())

    def reflector_model(self) -> ModelChoice:
        """The Reflector's model: reflection.model → model → observation.model → default."""
        return role_model(self._reflector_choice())

    def retrieval_config(self) -> RetrievalConfig | None:
        """Retrieval options, or None when retrieval is off (``retrieval: true`` = all defaults)."""
        if self.retrieval is False:
            return None
        return RetrievalConfig() if self.retrieval is True else self.retrieval

    @classmethod
    def from_mastra(cls, obj: Any) -> OMConfig:
        """Read Mastra's ``observationalMemory`` value: ``true``/``false``, an object, or its JSON.

        ``true`` means ``{model: 'google/gemini-2.5-flash'}`` as in Mastra's ``Memory``; note that
        an explicit model gets no default ``max_output_tokens``. ``false``/``null`` disables OM.
        """
        if isinstance(obj, (str, bytes)):
            obj = orjson.loads(obj)
        if obj is True:
            return cls(model=DEFAULT_MODEL)
        if obj is False or obj is None:
            return cls(enabled=False)
        return cls.model_validate(obj)
