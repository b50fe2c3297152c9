"""The ``om-deterministic`` litellm provider: models ``observer``, ``reflector`` and ``echo`` (and
``reader``, ``judge`` for ``om eval``).

Not a language model: string rules over the prompts this project builds. ``echo`` is the copying
Observer variant (one note per message) kept for tests that pin it.

Register once per process with :func:`register`; afterwards
``litellm.acompletion(model="om-deterministic/observer", ...)`` answers from
:mod:`.observe` / :mod:`.reflect` with no network. Usage is reported as ~4 characters a token.
The workers' client does not go through litellm for these models: it calls
:func:`streams.llm.deterministic.offline.complete`, which answers with the same functions.
"""

from __future__ import annotations

import time
from typing import Any

import litellm
from litellm import CustomLLM
from litellm.types.utils import ModelResponse

from streams.llm.deterministic.offline import FAULTS, PROVIDER, answer, answered, prepare, text_of, token_counts

__all__ = ["FAULTS", "PROVIDER", "DeterministicModel", "answer", "register"]


class DeterministicModel(CustomLLM):
    """litellm calls these with its handler signature; only model, messages, model_response and
    optional_params matter here."""

    def completion(  # type: ignore[override]
        self, model: str, messages: list, api_base: Any, custom_prompt_dict: Any,
        model_response: ModelResponse, print_verbose: Any, encoding: Any, api_key: Any,
        logging_obj: Any, optional_params: dict, *args: Any, **kwargs: Any,
    ) -> ModelResponse:
        plan, text = prepare(model, messages, optional_params or {})
        time.sleep(plan.wait_s([text_of(m) for m in messages]))
        return _response(model_response, text, messages)

    async def acompletion(  # type: ignore[override]
        self, model: str, messages: list, api_base: Any, custom_prompt_dict: Any,
        model_response: ModelResponse, print_verbose: Any, encoding: Any, api_key: Any,
        logging_obj: Any, optional_params: dict, *args: Any, **kwargs: Any,
    ) -> ModelResponse:
        text = await answered(model, messages, optional_params or {})  # in a thread (offline.py)
        return _response(model_response, text, messages)


def register() -> None:
    """Idempotent: adds the provider to ``litellm.custom_provider_map`` once."""
    current = list(getattr(litellm, "custom_provider_map", []) or [])
    if any(entry.get("provider") == PROVIDER for entry in current):
        return
    current.append({"provider": PROVIDER, "custom_handler": DeterministicModel()})
    litellm.custom_provider_map = current
    from litellm.utils import custom_llm_setup

    custom_llm_setup()


def _response(model_response: ModelResponse, text: str, messages: list) -> ModelResponse:
    model_response.choices[0].message.content = text  # type: ignore[union-attr]
    prompt_tokens, completion_tokens = token_counts(text, messages)
    model_response.usage = litellm.Usage(  # type: ignore[attr-defined]
        prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
        total_tokens=prompt_tokens + completion_tokens,
    )
    return model_response
