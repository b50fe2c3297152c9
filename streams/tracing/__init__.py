"""Optional OpenTelemetry traces: one trace per OM cycle, across the processes it runs through.

Entry point (the shell calls these; ``spans.py`` draws the trace they make)::

    from streams import tracing
    tracing.start(role="all")           # once per process: on if OTEL_* asks (settings.py), else a no-op
    tracing.decided(event, before, d)   # processor: after decide() (streams/fold.py)
    @tracing.traced_job                 # LLM worker: around run_job (streams/llm/jobs.py)
    @tracing.traced_call                # around each model request (streams/llm/client.py)
    tracing.trace_id(cycle_id)          # the trace of a cycle id from a log line or an event
    tracing.stop()                      # flush and turn off (tests; at exit the SDK flushes itself)

Rules this package keeps:

* Off costs nothing: until :func:`start` turns it on, no OpenTelemetry module is imported, and a
  hook is one ``None`` check.
* The decision core never sees it (``processors/`` imports no OpenTelemetry): the processor's hook
  reads a decision after ``decide`` returned it, and changes nothing in it.
* A cycle's trace needs no trace context on the job record: every process derives the trace id and
  root span id from the cycle id (``ids.py``). The result carries the W3C ``traceparent`` of the
  worker's span (a field left off the wire when tracing is off) so the processor's span nests under it.
* Spans say no text and no tenant ids (``attributes.py``); a failure is told by its kind.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from streams.tracing.ids import trace_id

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export import SpanExporter

    from streams.tracing.spans import Tracing

__all__ = ["TracingConfigError", "decided", "start", "stop", "trace_id", "traced_call", "traced_job"]

_active: Tracing | None = None
R = TypeVar("R")


class TracingConfigError(ValueError):
    """An ``OTEL_*`` setting this build cannot follow; the message names it."""


def start(env: Mapping[str, str] | None = None, *, role: str = "all", exporter: SpanExporter | None = None) -> bool:
    """Turn tracing on if ``env`` (default: the process environment) asks for it, or ``exporter`` is
    given (then spans go to it alone, synchronously: the tests' in-memory exporter). True when on."""
    global _active
    from pydantic import ValidationError

    from streams.tracing.settings import TracingSettings

    try:
        settings = TracingSettings.from_env(os.environ if env is None else env)
    except ValidationError as error:
        raise TracingConfigError("; ".join(e["msg"].removeprefix("Value error, ")
                                           for e in error.errors(include_url=False))) from None
    if exporter is None and not settings.exporters():
        return False
    from streams.tracing.provider import build_provider
    from streams.tracing.spans import Tracing

    try:
        provider = build_provider(settings, role, exporter)
    except ValueError as error:
        raise TracingConfigError(str(error)) from None
    stop()
    _active = Tracing(provider, tenant_ids=settings.tenant_ids)
    return True


def stop() -> None:
    """Export what is pending and turn tracing off."""
    global _active
    active, _active = _active, None
    if active is not None:
        active.provider.shutdown()


def decided(event: Any, before: Any, decision: Any) -> None:
    """The processor folded ``event`` into the key's state ``before`` (None: a new key) and got ``decision``."""
    if _active is not None:
        _active.decided(event, before, decision)


def traced_job(run: Callable[..., Awaitable[R]]) -> Callable[..., Awaitable[R]]:
    """Wraps ``run_job(job, …)``: the cycle's om.job span around it, when tracing is on."""

    @functools.wraps(run)
    async def run_traced(job: Any, *args: Any, **kwargs: Any) -> R:
        if _active is None:
            return await run(job, *args, **kwargs)
        return await _active.job(run, job, *args, **kwargs)  # type: ignore[return-value]

    return run_traced


def traced_call(complete: Callable[..., Awaitable[R]]) -> Callable[..., Awaitable[R]]:
    """Wraps a model client's ``complete(self, call)``: a span per model request, when tracing is on."""

    @functools.wraps(complete)
    async def complete_traced(client: Any, call: Any) -> R:
        if _active is None:
            return await complete(client, call)
        return await _active.call(complete, client, call)  # type: ignore[return-value]

    return complete_traced
