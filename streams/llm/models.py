"""Mastra-style ``provider/model`` strings → litellm model names, and per-model call settings.

| Mastra provider            | litellm prefix   | example                                             |
|----------------------------|------------------|-----------------------------------------------------|
| ``google``                 | ``gemini``       | google/gemini-2.5-flash → gemini/gemini-2.5-flash   |
| ``google-vertex``/``vertex`` | ``vertex_ai``  | vertex/gemini-2.5-pro → vertex_ai/gemini-2.5-pro    |
| ``openai``, ``openai.responses``, ``openai.chat`` | ``openai`` | openai.responses/gpt-5 → openai/gpt-5 |
| ``anthropic``              | ``anthropic``    | anthropic/claude-sonnet-4-5 → same                  |
| ``xai``                    | ``xai``          |                                                     |
| ``groq``, ``deepseek``, ``mistral``, ``cohere``, ``cerebras``, ``perplexity``, ``openrouter``, ``ollama``, ``azure``, ``bedrock`` | same | |
| ``togetherai``             | ``together_ai``  |                                                     |
| ``fireworks``              | ``fireworks_ai`` |                                                     |
| ``amazon-bedrock``         | ``bedrock``      |                                                     |
| ``om-deterministic``       | same (custom)    | the project's test model                            |
| no provider (``gpt-4o``)   | unchanged        | litellm infers the provider                         |
| anything else              | unchanged        | litellm's own provider names pass through           |

``default`` means Mastra's default model, ``google/gemini-2.5-flash``.
"""

from __future__ import annotations

from typing import Any

DEFAULT_MODEL = "google/gemini-2.5-flash"
_PROVIDERS = {
    "google": "gemini",
    "google-vertex": "vertex_ai",
    "vertex": "vertex_ai",
    "openai.responses": "openai",
    "openai.chat": "openai",
    "togetherai": "together_ai",
    "together": "together_ai",
    "fireworks": "fireworks_ai",
    "amazon-bedrock": "bedrock",
}


OFFLINE_PROVIDER = "om-deterministic"  # answered in-process: streams/llm/deterministic/offline.py


def to_litellm_model(model: str) -> str:
    model = DEFAULT_MODEL if model in ("", "default") else model
    if "/" not in model:
        return model
    provider, name = model.split("/", 1)
    return f"{_PROVIDERS.get(provider.lower(), provider.lower())}/{name}"


def provider_of(litellm_model: str) -> str:
    return litellm_model.split("/", 1)[0] if "/" in litellm_model else ""


def is_offline(model: str) -> bool:
    """Whether a configured model name (Mastra's spelling) is one of the offline models."""
    return provider_of(to_litellm_model(model)) == OFFLINE_PROVIDER


def max_output_cap(litellm_model: str) -> int | None:
    """The model's own output limit when litellm knows it (Mastra's 100 000 exceeds most); an offline
    model has none, and asking litellm would import it."""
    if provider_of(litellm_model) == OFFLINE_PROVIDER:
        return None
    try:
        import litellm

        info = litellm.get_model_info(litellm_model)
    except Exception:  # not in litellm's table
        return None
    cap = info.get("max_output_tokens")
    return int(cap) if cap else None


def provider_kwargs(litellm_model: str, provider_options: dict[str, Any] | None) -> dict[str, Any]:
    """Mastra ``providerOptions`` → litellm kwargs; only Google's thinking budget is mapped."""
    if not provider_options:
        return {}
    google = provider_options.get("google") or {}
    budget = (google.get("thinkingConfig") or {}).get("thinkingBudget")
    if budget is not None and provider_of(litellm_model) in ("gemini", "vertex_ai"):
        return {"thinking": {"type": "enabled", "budget_tokens": int(budget)}}
    return {}
