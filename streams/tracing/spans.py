"""The spans of a cycle, made by the shell's hooks while tracing is on (``streams.tracing``).

One trace per cycle::

    om.cycle     processor  the decision that issued the job (on a message, a control event or a
    │                       result); its trace id and span id are the cycle id's (ids.py); the
    │                       lifecycle events of the decision that name the cycle are span events
    ├─ om.job    LLM worker the job's run, child of om.cycle by the derived ids
    │  ├─ chat <model>      each model request of the run (Observer, extractor follow-up, every
    │  │                    Reflector compression level), with tokens, attempts, finish reason
    │  └─ om.result         processor: the result folded, child of om.job by the W3C
    │                       ``traceparent`` the worker put on the result (without one — an older
    │                       worker, tracing off there — child of om.cycle); outcome applied,
    │                       failed, stale or duplicate; the decision's lifecycle events as span
    │                       events
    (a cycle issued by applying a result links to that result's span)

Spans start and end inside one hook call, so none is left open across records, restarts or
rebalances. A batch the processor folds again after a crash (exactly-once re-runs it) exports its
spans again, with the same root ids.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    Span,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
)
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from processors.model_port import ModelCall, ModelCallError, ModelReply
from schemas.jobs import ObserveJob, ObserveResult, ReflectJob, ReflectResult
from streams.llm.models import provider_of, to_litellm_model
from streams.tracing import attributes as attrs
from streams.tracing.ids import cycle_ids
from streams.tracing.provider import PINNED

Job = ObserveJob | ReflectJob
Result = ObserveResult | ReflectResult
_QUIET = {"record_exception": False, "set_status_on_exception": False}  # an exception's text may quote input


class Tracing:
    def __init__(self, provider: TracerProvider, *, tenant_ids: bool = False) -> None:
        self.provider = provider
        self.tracer = provider.get_tracer("om-stream")
        self.tenant_ids = tenant_ids
        self._propagator = TraceContextTextMapPropagator()

    # --- the processor ------------------------------------------------------------------------
    def decided(self, event: Any, before: Any, decision: Any) -> None:
        """After ``decide``: a span for a folded result, a root span for every job issued."""
        link = None
        if isinstance(event, (ObserveResult, ReflectResult)):
            link = self._applied(event, _outcome(event, before), decision.events)
        trigger = getattr(event, "kind", "message")
        for job in decision.jobs:
            self._issued(job, trigger, decision.events, link)

    def _issued(self, job: Job, trigger: str, events: Any, link: SpanContext | None) -> None:
        token = PINNED.set(cycle_ids(job.cycle_id))
        try:
            span = self.tracer.start_span("om.cycle", context=Context(), kind=SpanKind.PRODUCER,
                                          attributes=attrs.cycle_attributes(job, trigger, self.tenant_ids),
                                          links=[Link(link)] if link is not None else None, **_QUIET)
        finally:
            PINNED.reset(token)
        _add_events(span, (e for e in events if getattr(e, "cycle_id", None) == job.cycle_id))
        span.end()

    def _applied(self, result: Result, outcome: str, events: Any) -> SpanContext:
        parent = self._extract(result.traceparent) if result.traceparent else self.cycle_context(result.cycle_id)
        span = self.tracer.start_span("om.result", context=parent, kind=SpanKind.CONSUMER,
                                      attributes=attrs.applied_attributes(result, outcome, self.tenant_ids), **_QUIET)
        _add_events(span, events)
        if outcome == "failed":
            span.set_status(Status(StatusCode.ERROR))
        span.end()
        return span.get_span_context()

    # --- the LLM worker -----------------------------------------------------------------------
    async def job(self, run: Callable[..., Awaitable[Result]], job: Job, *args: Any, **kwargs: Any) -> Result:
        """``run(job, …)`` inside the cycle's om.job span; the result carries the span's traceparent."""
        span = self.tracer.start_span("om.job", context=self.cycle_context(job.cycle_id), kind=SpanKind.CONSUMER,
                                      attributes=attrs.job_attributes(job, self.tenant_ids), **_QUIET)
        with trace.use_span(span, end_on_exit=True, **_QUIET):
            try:
                result = await run(job, *args, **kwargs)
            except BaseException as error:  # cancelled by a stop, or a bug: told by kind, then raised
                _failed(span, error)
                raise
            span.set_attributes(attrs.job_result_attributes(result))
            if not result.ok:
                span.set_status(Status(StatusCode.ERROR))
            carrier: dict[str, str] = {}
            self._propagator.inject(carrier)
            return result.model_copy(update={"traceparent": carrier.get("traceparent")})

    async def call(self, complete: Callable[..., Awaitable[ModelReply]], client: Any, call: ModelCall) -> ModelReply:
        """One model request (``client.complete(call)``), child of the span current in the caller."""
        model = to_litellm_model(call.model)
        span = self.tracer.start_span(f"chat {model}", kind=SpanKind.CLIENT,
                                      attributes=attrs.call_attributes(call.role, model, provider_of(model)), **_QUIET)
        started = time.monotonic()
        with trace.use_span(span, end_on_exit=True, **_QUIET):
            try:
                reply = await complete(client, call)
            except BaseException as error:
                _failed(span, error)
                span.set_attribute("om.latency_ms", _ms(started))
                if isinstance(error, ModelCallError):
                    span.set_attributes({"om.attempts": error.attempts, "om.transient": error.transient})
                raise
            usage = reply.usage
            span.set_attributes(attrs.reply_attributes(reply.model or model, usage.input_tokens, usage.output_tokens,
                                                       usage.cached_input_tokens, reply.finish_reason, reply.attempts,
                                                       _ms(started), usage.cache_write_input_tokens))
            return reply

    # --- context ------------------------------------------------------------------------------
    def cycle_context(self, cycle_id: str) -> Context:
        """The cycle's root span as a remote parent, sampled as the root was (the same sampler on the
        same trace id decides alike in every process)."""
        trace_id, span_id = cycle_ids(cycle_id)
        sampled = self.provider.sampler.should_sample(Context(), trace_id, "om.cycle").decision.is_sampled()
        root = SpanContext(trace_id, span_id, is_remote=True,
                           trace_flags=TraceFlags(TraceFlags.SAMPLED if sampled else TraceFlags.DEFAULT))
        return trace.set_span_in_context(NonRecordingSpan(root), Context())

    def _extract(self, traceparent: str) -> Context:
        return self._propagator.extract({"traceparent": traceparent}, context=Context())


def _outcome(result: Result, before: Any) -> str:
    """What the fold did with the result, read from the state it was folded into (compare-and-set)."""
    if before is None or before.find_flight(result.cycle_id) is None:
        return "duplicate" if before is not None and result.cycle_id in before.applied_cycles else "stale"
    return "applied" if result.ok else "failed"


def _add_events(span: Span, events: Any) -> None:
    for event in events:
        span.add_event(event.type, attrs.event_attributes(event))


def _failed(span: Span, error: BaseException) -> None:
    span.set_status(Status(StatusCode.ERROR))
    span.set_attributes({"error.type": type(error).__name__, "om.outcome": "failed"})


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
