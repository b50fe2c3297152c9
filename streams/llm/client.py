"""The litellm-backed :class:`~processors.model_port.ModelClient` the workers use.

It maps Mastra model names, sends the temperature the call carries (the role defaults are decided in
``processors/config/roles.py``),
sets the output cap (the call's, else the model's known limit, else ``default_output_tokens``),
sends each role to its endpoint (streams/llm/endpoints.py) with its timeout, and reports usage,
attempts and the finish reason on every reply. The offline models (``om-deterministic/…``) are
answered in-process (streams/llm/deterministic/offline.py), not through litellm: same answers and
faults, without litellm's ~2.6 ms of CPU per call.

Rules this file keeps (issue 24):

* One retry layer, the project's (``retry.py``): litellm's and the OpenAI client's own retries are
  off (``num_retries=0``, ``max_retries=0``), so a timeout costs one request, not three.
* Each attempt is bounded by the role's timeout here too, whatever the provider does with it.
* An answer cut off by the output cap (``finish_reason == "length"``) is asked again once with the
  cap doubled (up to the model's limit); cut off again, or no room to raise it, the call fails —
  a truncated answer is never returned as complete.
* Every call logs its start, each retry, and its end or failure: model, role, tokens, latency —
  never prompt or answer text, never the key — and counts in the metrics (streams/metrics.py) by
  role and model. litellm prints nothing to stdout.

litellm is imported in a thread, by the ``llm`` role as it starts (:meth:`LiteLLMClient.load`) when a
configured model is a provider's, or else on the first call to one: its import is most of a
worker's start-up (seconds of CPU), and the processor, which never calls a model, must not wait for
it after a restart; done on the event loop it would stall every agent meanwhile. A worker whose
models are all offline never imports it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import time
from dataclasses import replace
from typing import Any, Awaitable, Callable, Iterable, Mapping

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # read when litellm is imported

from processors.model_port import ModelCall, ModelCallError, ModelReply, Role  # noqa: E402
from streams import metrics, tracing  # noqa: E402
from streams.llm.endpoints import DEFAULT_OUTPUT_TOKENS, DEFAULT_TIMEOUTS, Endpoints  # noqa: E402
from streams.llm.models import (  # noqa: E402
    OFFLINE_PROVIDER,
    is_offline,
    max_output_cap,
    provider_kwargs,
    provider_of,
    to_litellm_model,
)
from streams.llm.deterministic import offline  # noqa: E402
from streams.llm.retry import RetryError, RetryPolicy, with_retry  # noqa: E402
from streams.llm.usage import usage_of  # noqa: E402

Completion = Callable[..., Awaitable[Any]]
log = logging.getLogger("streams.llm.calls")


def _litellm_completion() -> Completion:
    import litellm

    litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" banners on stdout
    litellm.set_verbose = False
    return litellm.acompletion


def _import_litellm() -> Completion:
    """litellm's ``acompletion``, with the offline models registered as its provider too (for callers
    of litellm itself: the workers' client answers them in-process)."""
    completion = _litellm_completion()
    from streams.llm.deterministic.provider import register

    register()
    return completion


class LiteLLMClient:
    """``extra`` goes to every ``litellm.acompletion`` call (``mock_response``, …)."""

    def __init__(
        self,
        retry: RetryPolicy = RetryPolicy(),
        *,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        rng: random.Random | None = None,
        completion: Completion | None = None,
        timeouts: Mapping[str, float] | None = None,
        endpoints: Endpoints | None = None,
        default_output_tokens: int = DEFAULT_OUTPUT_TOKENS,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.retry = retry
        self._sleep = sleep
        self._rng = rng
        self._completion = completion
        self._given = completion is not None  # a test's or a cassette's: every call goes to it
        self._loading: asyncio.Task[Completion] | None = None
        self.timeouts = {**DEFAULT_TIMEOUTS, **(timeouts or {})}
        self.endpoints = endpoints or Endpoints()
        self.default_output_tokens = default_output_tokens
        self._extra = dict(extra or {})

    @classmethod
    def from_settings(cls, settings: Any, config: Any = None, **kwargs: Any) -> LiteLLMClient:
        """The worker's client: retries, timeouts, endpoints and output cap from ``Settings``."""
        from streams.llm.endpoints import endpoints_for

        retry = RetryPolicy(max_retries=settings.llm_max_retries, base_delay=settings.llm_retry_base_ms / 1000,
                            max_delay=settings.llm_retry_max_ms / 1000)
        return cls(
            retry,
            timeouts={"observer": settings.observer_timeout_s, "reflector": settings.reflector_timeout_s,
                      "extractor": settings.extractor_timeout_s},
            endpoints=endpoints_for(settings.model_api_base, settings.model_api_key.get_secret_value(), config),
            default_output_tokens=settings.default_output_tokens,
            **kwargs,
        )

    @tracing.traced_call
    async def complete(self, call: ModelCall) -> ModelReply:
        kwargs = self.request_kwargs(call)
        completion = await self._completion_for(kwargs)
        reply = await self._send(call, kwargs, completion)
        if reply.finish_reason != "length" or call.cut_off_ok:
            return reply
        cap = kwargs.get("max_tokens")
        raised = self._raised_cap(kwargs["model"], cap)
        if raised is None:
            raise self._cut_off(call, kwargs, reply)
        log.warning("om.llm.call.truncated", extra=_fields(call, kwargs, max_tokens=cap, raised_to=raised,
                                                             output_tokens=reply.usage.output_tokens))
        again = await self._send(call, {**kwargs, "max_tokens": raised}, completion)
        total = replace(again, usage=reply.usage + again.usage, attempts=reply.attempts + again.attempts)
        if again.finish_reason == "length":
            raise self._cut_off(call, {**kwargs, "max_tokens": raised}, total)
        return total

    async def _completion_for(self, kwargs: Mapping[str, Any]) -> Completion:
        """A given completion; else the offline models answered in-process (litellm's own mock is
        litellm's); else litellm's."""
        if self._given:
            return self._completion  # type: ignore[return-value]
        if provider_of(kwargs["model"]) == OFFLINE_PROVIDER and "mock_response" not in kwargs:
            return offline.complete
        return await self.load()

    async def load(self, models: Iterable[tuple[Role, str]] | None = None) -> Completion | None:
        """litellm's ``acompletion``, imported once in a thread however many calls wait for it. The
        ``llm`` role calls it as the worker starts with its configured ``(role, model)`` pairs
        (streams/llm_agent.py): when all of them are offline models, which never go through litellm,
        nothing is imported (None)."""
        if self._completion is not None:  # given, or loaded before
            return self._completion
        if models is not None and all(is_offline(model) for _, model in models):
            return None
        if self._loading is None:
            self._loading = asyncio.ensure_future(asyncio.to_thread(_import_litellm))
        self._completion = await asyncio.shield(self._loading)
        return self._completion

    def request_kwargs(self, call: ModelCall) -> dict[str, Any]:
        """Everything passed to ``litellm.acompletion`` for ``call`` (exposed for tests and logs)."""
        model = to_litellm_model(call.model)
        kwargs: dict[str, Any] = {
            "model": model, "messages": call.messages, "drop_params": True, "num_retries": 0, "max_retries": 0,
            **self.endpoints.for_call(call.role, call.model).kwargs(), **self._extra,
        }
        kwargs.setdefault("timeout", self.timeouts.get(call.role, DEFAULT_TIMEOUTS["observer"]))
        if call.temperature is not None:  # decided in processors/config/roles.py (drop_params drops it where unsupported)
            kwargs["temperature"] = call.temperature
        cap = max_output_cap(model)
        if call.max_output_tokens is not None:
            kwargs["max_tokens"] = min(call.max_output_tokens, cap) if cap else call.max_output_tokens
        else:  # a custom model (spec §2.2 gives it no cap): its known limit, else a sensible one
            kwargs["max_tokens"] = cap or self.default_output_tokens
        if call.json_schema is not None:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "extracted_values", "schema": call.json_schema},
            }
        kwargs.update(provider_kwargs(model, call.provider_options))
        return kwargs

    async def _send(self, call: ModelCall, kwargs: dict[str, Any], completion: Completion) -> ModelReply:
        """One logical request: the project's retries around per-attempt, time-bounded requests."""
        timeout = float(kwargs["timeout"])
        started = time.monotonic()
        log.info("om.llm.call.start", extra=_fields(call, kwargs, max_tokens=kwargs.get("max_tokens"),
                                                     timeout_s=timeout))

        async def attempt() -> Any:
            try:
                return await asyncio.wait_for(completion(**kwargs), timeout)
            except asyncio.TimeoutError as exc:  # our bound fired before the provider's
                raise TimeoutError(f"request timed out after {timeout:g} s") from exc

        def on_retry(attempts: int, error: Exception, delay: float) -> None:
            log.warning("om.llm.call.retry", extra=_fields(call, kwargs, attempt=attempts, delay_s=round(delay, 2),
                                                            error=_error_kind(error), latency_ms=_ms(started)))

        try:
            response, attempts = await with_retry(attempt, self.retry, self._sleep, self._rng, on_retry)
        except RetryError as exc:
            metrics.llm_call(call.role, kwargs["model"], time.monotonic() - started, ok=False)
            log.error("om.llm.call.failed", extra=_fields(call, kwargs, attempts=exc.attempts, transient=exc.transient,
                                                           error=_error_kind(exc.last), latency_ms=_ms(started)))
            raise ModelCallError(
                f"{call.role} call to {kwargs['model']} failed after {exc.attempts} attempt(s): {exc}",
                transient=exc.transient,
                attempts=exc.attempts,
            ) from exc.last
        reply = ModelReply(text=_content(response), usage=usage_of(response), attempts=attempts,
                           model=kwargs["model"], finish_reason=_finish_reason(response))
        metrics.llm_call(call.role, kwargs["model"], time.monotonic() - started, ok=True,
                         input_tokens=reply.usage.input_tokens, output_tokens=reply.usage.output_tokens)
        log.info("om.llm.call.done", extra=_fields(
            call, kwargs, attempts=attempts, input_tokens=reply.usage.input_tokens,
            cached_input_tokens=reply.usage.cached_input_tokens,
            cache_write_input_tokens=reply.usage.cache_write_input_tokens,
            output_tokens=reply.usage.output_tokens, finish_reason=reply.finish_reason, latency_ms=_ms(started)))
        return reply

    def _raised_cap(self, model: str, cap: int | None) -> int | None:
        """Twice the cap, bounded by the model's own limit; None when it cannot grow."""
        if cap is None:
            return None
        limit = max_output_cap(model)
        raised = min(cap * 2, limit) if limit else cap * 2
        return raised if raised > cap else None

    def _cut_off(self, call: ModelCall, kwargs: dict[str, Any], reply: ModelReply) -> ModelCallError:
        log.error("om.llm.call.failed", extra=_fields(call, kwargs, attempts=reply.attempts, transient=False,
                                                       error="cut off at the output cap",
                                                       max_tokens=kwargs.get("max_tokens"),
                                                       output_tokens=reply.usage.output_tokens))
        return ModelCallError(
            f"{call.role} answer from {kwargs['model']} was cut off at the output cap "
            f"({kwargs.get('max_tokens')} tokens, finish_reason=length); not applied",
            transient=False, attempts=reply.attempts, usage=reply.usage,
        )


def _fields(call: ModelCall, kwargs: dict[str, Any], **more: Any) -> dict[str, Any]:
    """Log fields: never messages, answers or the key."""
    return {"role": call.role, "model": kwargs["model"], "api_base": kwargs.get("api_base"), **more}


def _error_kind(error: BaseException) -> str:
    """The error's type and status, not its text (a provider may echo the prompt in it)."""
    status = getattr(error, "status_code", None) or getattr(error, "status", None)
    return f"{type(error).__name__}({status})" if isinstance(status, int) else type(error).__name__


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _content(response: Any) -> str:
    try:
        return response.choices[0].message.content or ""
    except (AttributeError, IndexError):
        return ""


def _finish_reason(response: Any) -> str | None:
    try:
        reason = response.choices[0].finish_reason
    except (AttributeError, IndexError):
        return None
    return str(reason) if reason else None
