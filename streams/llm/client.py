"""The litellm-backed :class:`~processors.model_port.ModelClient` the workers use.

It maps Mastra model names, sends the temperature and output budget the call carries (the role
defaults are decided in ``processors/config/roles.py``), caps the budget at what the model can
produce, retries transient errors, and reports usage and attempts on every reply. The
deterministic provider is registered on first use of an ``om-deterministic/…`` model.
"""

from __future__ import annotations

import asyncio
import os
import random
from typing import Any, Awaitable, Callable

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm  # noqa: E402  (the environment variable must be set before this import)

from processors.model_port import ModelCall, ModelCallError, ModelReply, Usage  # noqa: E402
from streams.llm.models import (  # noqa: E402
    max_output_cap,
    provider_kwargs,
    provider_of,
    to_litellm_model,
)
from streams.llm.retry import RetryError, RetryPolicy, with_retry  # noqa: E402

Completion = Callable[..., Awaitable[Any]]


class LiteLLMClient:
    """``extra`` goes to every ``litellm.acompletion`` call (``api_base``, ``mock_response``, …)."""

    def __init__(
        self,
        retry: RetryPolicy = RetryPolicy(),
        *,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        rng: random.Random | None = None,
        completion: Completion | None = None,
        timeout: float | None = 600.0,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.retry = retry
        self._sleep = sleep
        self._rng = rng
        self._completion = completion or litellm.acompletion
        self._timeout = timeout
        self._extra = dict(extra or {})

    async def complete(self, call: ModelCall) -> ModelReply:
        kwargs = self.request_kwargs(call)
        try:
            response, attempts = await with_retry(
                lambda: self._completion(**kwargs), self.retry, self._sleep, self._rng
            )
        except RetryError as exc:
            raise ModelCallError(
                f"{call.role} call to {kwargs['model']} failed after {exc.attempts} attempt(s): {exc}",
                transient=exc.transient,
                attempts=exc.attempts,
            ) from exc.last
        return ModelReply(text=_content(response), usage=_usage(response), attempts=attempts, model=kwargs["model"])

    def request_kwargs(self, call: ModelCall) -> dict[str, Any]:
        """Everything passed to ``litellm.acompletion`` for ``call`` (exposed for tests and logs)."""
        model = to_litellm_model(call.model)
        if provider_of(model) == "om-deterministic":
            from streams.llm.deterministic.provider import register

            register()
        kwargs: dict[str, Any] = {"model": model, "messages": call.messages, "drop_params": True, **self._extra}
        if self._timeout is not None:
            kwargs.setdefault("timeout", self._timeout)
        if call.temperature is not None:  # decided by the role defaults (processors/config/roles.py)
            kwargs["temperature"] = call.temperature
        if call.max_output_tokens is not None:
            cap = max_output_cap(model)
            kwargs["max_tokens"] = min(call.max_output_tokens, cap) if cap else call.max_output_tokens
        if call.json_schema is not None:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "extracted_values", "schema": call.json_schema},
            }
        kwargs.update(provider_kwargs(model, call.provider_options))
        return kwargs


def _content(response: Any) -> str:
    try:
        return response.choices[0].message.content or ""
    except (AttributeError, IndexError):
        return ""


def _usage(response: Any) -> Usage:
    usage = getattr(response, "usage", None)
    if usage is None:
        return Usage()
    return Usage(
        input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
    )
