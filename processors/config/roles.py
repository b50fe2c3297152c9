"""Which model each role uses, and the sampling defaults that go with it (spec §2.2).

The model of a role falls back along a chain: its own section → the top-level ``model`` → the
other role's section → the default. ``'default'`` anywhere means "the default for this role".

Defaults are only filled in where they are known to be safe: a temperature is sent only to models
known to accept one, and the large output budget only to models OM picked itself (a user's own
model gets no silent ``max_output_tokens``).
"""

from __future__ import annotations

import re

from processors.config.sections import ModelChoice, ModelSettings
from processors.config.model_tiers import ModelByInputTokens

DEFAULT_MODEL = "google/gemini-2.5-flash"
OBSERVER_TEMPERATURE = 0.3
REFLECTOR_TEMPERATURE = 0.0
DEFAULT_MAX_OUTPUT_TOKENS = 100_000

# The rule: reasoning models that reject a temperature are OpenAI's o-series (o1, o3-mini, o4-mini…)
# and the GPT-5 family except its chat variants. Everything else is assumed to accept one.
_NO_TEMPERATURE = re.compile(r"^(o[1-9](-|$)|gpt-5(?!.*-chat))")


def configured_model(*chain: ModelChoice | None) -> ModelChoice | None:
    """The first model set along the fallback chain, as the user wrote it (may be ``'default'``)."""
    return next((model for model in chain if model is not None), None)


def role_model(configured: ModelChoice | None) -> ModelChoice:
    """The model a role actually calls: ``None`` and ``'default'`` become the role default."""
    return DEFAULT_MODEL if configured is None or configured == "default" else configured


def model_supports_temperature(model: ModelChoice) -> bool:
    """Whether a temperature may be sent; for tiers, only if every tier accepts one."""
    if isinstance(model, ModelByInputTokens):
        return all(model_supports_temperature(tier) for tier in model.models())
    model_id = model.rpartition("/")[2].lower()
    return not _NO_TEMPERATURE.match(model_id)


def with_role_defaults(
    settings: ModelSettings, configured: ModelChoice | None, temperature: float
) -> ModelSettings:
    """``settings`` with the role's defaults filled in where the user left a value unset."""
    model = role_model(configured)
    fill_temperature = settings.temperature is None and model_supports_temperature(model)
    om_picked_model = (
        configured is None or configured == "default" or isinstance(configured, ModelByInputTokens)
    )
    fill_max_output = settings.max_output_tokens is None and om_picked_model
    return settings.model_copy(update={
        "temperature": temperature if fill_temperature else settings.temperature,
        "max_output_tokens": DEFAULT_MAX_OUTPUT_TOKENS if fill_max_output else settings.max_output_tokens,
    })
