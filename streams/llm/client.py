"""The litellm-backed :class:`~processors.model_port.ModelClient` the workers use.

It maps Mastra model names, applies the role's default temperature (when the model takes one),
caps the output budget at what the model can produce, retries transient errors, and reports
usage and attempts on every reply. The deterministic provider is registered on first use of an
``om-deterministic/…`` model.

litellm is imported on the first call, in a thread: its import is most of a worker's start-up
(seconds of CPU), and the processor, which never calls a model, must not wait for it after a
restart; done on the event loop it would stall every agent meanwhile.
"""

from __future__ import annotations

import asyncio
import os
import random
from typing import Any, Awaitable, Callable

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # read when litellm is imported

from processors.model_port import ModelCall, ModelCallError, ModelReply, Usage  # noqa: E402
from streams.llm.models import (  # noqa: E402
    ROLE_TEMPERATURE,
    max_output_cap,
    provider_kwargs,
    provider_of,
    supports_temperature,
    to_litellm_model,
)
from streams.llm.retry import RetryError, RetryPolicy, with_retry  # noqa: E402

Completion = Callable[..., Awaitable[Any]]


def _litellm_completion() -> Completion:
    import litellm

    return litellm.acompletion


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
        self._completion = completion
        self._loading: asyncio.Task[Completion] | None = None
        self._timeout = timeout
        self._extra = dict(extra or {})

    async def complete(self, call: ModelCall) -> ModelReply:
        completion = self._completion or await self._load()
        kwargs = self.request_kwargs(call)
        try:
            response, attempts = await with_retry(
                lambda: completion(**kwargs), self.retry, self._sleep, self._rng
            )
        except RetryError as exc:
            raise ModelCallError(
                f"{call.role} call to {kwargs['model']} failed after {exc.attempts} attempt(s): {exc}",
                transient=exc.transient,
                attempts=exc.attempts,
            ) from exc.last
        return ModelReply(text=_content(response), usage=_usage(response), attempts=attempts, model=kwargs["model"])

    async def _load(self) -> Completion:
        """litellm's ``acompletion``, imported once in a thread however many calls wait for it."""
        if self._loading is None:
            self._loading = asyncio.ensure_future(asyncio.to_thread(_litellm_completion))
        self._completion = await asyncio.shield(self._loading)
        return self._completion

    def request_kwargs(self, call: ModelCall) -> dict[str, Any]:
        """Everything passed to ``litellm.acompletion`` for ``call`` (exposed for tests and logs)."""
        model = to_litellm_model(call.model)
        if provider_of(model) == "om-deterministic":
            from streams.llm.deterministic.provider import register

            register()
        kwargs: dict[str, Any] = {"model": model, "messages": call.messages, "drop_params": True, **self._extra}
        if self._timeout is not None:
            kwargs.setdefault("timeout", self._timeout)
        temperature = call.temperature if call.temperature is not None else ROLE_TEMPERATURE.get(call.role)
        if temperature is not None and supports_temperature(model):
            kwargs["temperature"] = temperature
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
