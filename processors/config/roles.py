"""Which model each role uses, and the sampling defaults that go with it (spec §2.2).

The model of a role falls back along a chain: its own section → the top-level ``model`` → the
other role's section → the default. ``'default'`` anywhere means "the default for this role".

Defaults are filled in as Mastra 1.31 fills them (``observational-memory.ts``):

* a temperature (Observer 0.3, Reflector 0) only for a model its provider registry lists as taking
  one (``temperature_models.py``): an unlisted model — a local OpenAI-compatible server's alias, a
  provider without a list, a ``ModelByInputTokens`` tier map — gets none, its provider's default;
* the 100 000-token output budget only when OM picked the model itself (no model set, ``'default'``,
  or a tier map); a model named explicitly, even the default one, gets no ``max_output_tokens``.

What is decided here is what is sent: the workers pass both values through unchanged.
"""

from __future__ import annotations

from processors.config.sections import ModelChoice, ModelSettings
from processors.config.model_tiers import ModelByInputTokens
from processors.config.temperature_models import TEMPERATURE_MODELS

DEFAULT_MODEL = "google/gemini-2.5-flash"
OBSERVER_TEMPERATURE = 0.3
REFLECTOR_TEMPERATURE = 0.0
DEFAULT_MAX_OUTPUT_TOKENS = 100_000


def configured_model(*chain: ModelChoice | None) -> ModelChoice | None:
    """The first model set along the fallback chain, as the user wrote it (may be ``'default'``)."""
    return next((model for model in chain if model is not None), None)


def role_model(configured: ModelChoice | None) -> ModelChoice:
    """The model a role actually calls: ``None`` and ``'default'`` become the role default."""
    return DEFAULT_MODEL if configured is None or configured == "default" else configured


def model_supports_temperature(model: ModelChoice) -> bool:
    """Whether the registry lists ``provider/model`` as taking a temperature; never for a tier map.

    A provider without a list is asked about the provider nested in the model id, as Mastra does
    (``openrouter/openai/gpt-4o`` → ``openai/gpt-4o``).
    """
    if isinstance(model, ModelByInputTokens):
        return False
    provider, _, model_id = model.partition("/")
    listed = TEMPERATURE_MODELS.get(provider)
    if listed is not None:
        return model_id in listed
    nested, _, nested_id = model_id.partition("/")
    return nested_id in TEMPERATURE_MODELS.get(nested, ())


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
