"""The ``om-deterministic`` litellm provider: models ``observer``, ``reflector`` and ``echo`` (and
``reader``, ``judge`` for ``om eval``).

Not a language model: string rules over the prompts this project builds. ``echo`` is the copying
Observer variant (one note per message) kept for tests that pin it.

Register once per process with :func:`register`; afterwards
``litellm.acompletion(model="om-deterministic/observer", ...)`` answers from
:mod:`.observe` / :mod:`.reflect` with no network. Usage is reported as ~4 characters a token.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import litellm
from litellm import CustomLLM
from litellm.types.utils import ModelResponse

from streams.llm.models import OFFLINE_PROVIDER
from streams.llm.deterministic.faults import DEGENERATE_TEXT, EMPTY_TEXT, MALFORMED_TEXT, FaultCounter, FaultPlan, parse_model
from streams.llm.deterministic import echo
from streams.llm.deterministic.observe import observe
from streams.llm.deterministic.read import judge, read
from streams.llm.deterministic.reflect import reflect
from streams.llm.deterministic.structured import fill_schema

PROVIDER = OFFLINE_PROVIDER
FAULTS = FaultCounter()


class DeterministicModel(CustomLLM):
    """litellm calls these with its handler signature; only model, messages, model_response and
    optional_params matter here."""

    def completion(  # type: ignore[override]
        self, model: str, messages: list, api_base: Any, custom_prompt_dict: Any,
        model_response: ModelResponse, print_verbose: Any, encoding: Any, api_key: Any,
        logging_obj: Any, optional_params: dict, *args: Any, **kwargs: Any,
    ) -> ModelResponse:
        plan, text = self._prepare(model, messages, optional_params or {})
        time.sleep(plan.wait_s([_text(m) for m in messages]))
        return _response(model_response, text, messages)

    async def acompletion(  # type: ignore[override]
        self, model: str, messages: list, api_base: Any, custom_prompt_dict: Any,
        model_response: ModelResponse, print_verbose: Any, encoding: Any, api_key: Any,
        logging_obj: Any, optional_params: dict, *args: Any, **kwargs: Any,
    ) -> ModelResponse:
        # in a thread, as a provider's answer comes over a socket: the string rules take milliseconds
        # on a long prompt, which on the loop would stall the worker's fold and sink (streams/app.py)
        plan, text = await asyncio.to_thread(self._prepare, model, messages, optional_params or {})
        await asyncio.sleep(plan.wait_s([_text(m) for m in messages]))
        return _response(model_response, text, messages)

    def _prepare(self, model: str, messages: list, optional_params: dict[str, Any]) -> tuple[FaultPlan, str]:
        plan = parse_model(model, optional_params.get("om_deterministic"))
        if FAULTS.should_fail(model, plan):
            failure = _failure(plan, model)
            if isinstance(failure, Exception):
                raise failure
            return plan, failure
        return plan, answer(plan.role, messages, optional_params.get("response_format"))


def answer(role: str, messages: list[dict[str, Any]], response_format: dict[str, Any] | None = None) -> str:
    """The model's answer as a pure function of its input."""
    if response_format and response_format.get("type") == "json_schema":
        return fill_schema(response_format["json_schema"].get("schema", {}), _texts(messages))
    system = next((_text(m) for m in messages if m.get("role") == "system"), "")
    users = [_text(m) for m in messages if m.get("role") == "user"]
    if role == "reflector":
        return reflect(users[-1] if users else "", system)
    if role == "reader":
        return read([_text(m) for m in messages])
    if role == "judge":
        return judge(users[-1] if users else "")
    task, history = (users[0], users[-1]) if len(users) > 1 else ("", users[-1] if users else "")
    return (echo.observe if role == "echo" else observe)(system, task, history)


def register() -> None:
    """Idempotent: adds the provider to ``litellm.custom_provider_map`` once."""
    current = list(getattr(litellm, "custom_provider_map", []) or [])
    if any(entry.get("provider") == PROVIDER for entry in current):
        return
    current.append({"provider": PROVIDER, "custom_handler": DeterministicModel()})
    litellm.custom_provider_map = current
    from litellm.utils import custom_llm_setup

    custom_llm_setup()


def _failure(plan: FaultPlan, model: str) -> Exception | str:
    name = f"{PROVIDER}/{model}"
    if plan.fail == "429":
        return litellm.RateLimitError("deterministic rate limit", PROVIDER, name)
    if plan.fail == "500":
        return litellm.InternalServerError("deterministic server error", PROVIDER, name)
    if plan.fail == "503":
        return litellm.ServiceUnavailableError("deterministic overload", PROVIDER, name)
    if plan.fail == "timeout":
        return litellm.Timeout("deterministic timeout", name, PROVIDER)
    if plan.fail == "400":
        return litellm.BadRequestError("deterministic bad request", name, PROVIDER)
    return {"degenerate": DEGENERATE_TEXT, "malformed": MALFORMED_TEXT}.get(plan.fail or "", EMPTY_TEXT)


def _response(model_response: ModelResponse, text: str, messages: list) -> ModelResponse:
    model_response.choices[0].message.content = text  # type: ignore[union-attr]
    prompt_tokens = sum(len(_text(m)) for m in messages) // 4
    completion_tokens = len(text) // 4
    model_response.usage = litellm.Usage(  # type: ignore[attr-defined]
        prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
        total_tokens=prompt_tokens + completion_tokens,
    )
    return model_response


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content or [] if isinstance(p, dict) and p.get("type") == "text")


def _texts(messages: list[dict[str, Any]]) -> str:
    return "\n".join(_text(m) for m in messages)
