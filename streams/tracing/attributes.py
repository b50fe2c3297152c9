"""What a span may say: a closed list of attributes per span, and nothing else.

Rules this file keeps:

* Never text: no message, prompt, answer, observation, hint, title or error message (a provider or
  a hook may quote the prompt in one). Failures are told by kind (``error.type`` = the exception's
  class) and outcome.
* Never a tenant's ids — thread id, resource id, lookup key — unless the operator opted in
  (``OM_TRACE_TENANT_IDS=true``). The cycle id is kept: it is derived by hashing (processors'
  ``next_cycle_id``), already in the INFO logs and the lifecycle events, and it is what joins a
  trace to them.
* The model call follows OpenTelemetry's GenAI conventions (``gen_ai.*``) so that tracing
  backends recognise it; OM's own figures are ``om.*``.
"""

from __future__ import annotations

from typing import Any

from schemas.jobs import ObserveJob, ObserveResult, ReflectJob, ReflectResult

Attributes = dict[str, Any]


def role_of(item: Any) -> str:
    return "observer" if isinstance(item, (ObserveJob, ObserveResult)) else "reflector"


def cycle_attributes(job: ObserveJob | ReflectJob, trigger: str, tenant_ids: bool) -> Attributes:
    """The root span: the decision that issued the job, and what the job holds."""
    attributes: Attributes = {"om.cycle_id": job.cycle_id, "om.role": role_of(job), "om.mode": job.mode,
                              "om.scope": job.scope, "om.trigger": trigger, "om.generation": job.generation}
    if isinstance(job, ObserveJob):
        attributes.update({"om.messages": len(job.messages), "om.input_tokens": job.tokens_to_observe})
    else:
        attributes.update({"om.observation_lines": job.line_count, "om.input_tokens": job.input_tokens,
                           "om.target_tokens": job.target_tokens, "om.start_level": job.start_level})
    return attributes | _tenant(tenant_ids, job.key, job.resource_id, job.thread_id)


def job_attributes(job: ObserveJob | ReflectJob, tenant_ids: bool) -> Attributes:
    return {"om.cycle_id": job.cycle_id, "om.role": role_of(job), "om.mode": job.mode,
            "om.scope": job.scope} | _tenant(tenant_ids, job.key, job.resource_id, job.thread_id)


def outcome_of(result: ObserveResult | ReflectResult) -> str:
    if getattr(result, "degenerate", False):
        return "degenerate"
    return "ok" if result.ok else "failed"


def job_result_attributes(result: ObserveResult | ReflectResult) -> Attributes:
    """What the worker's run produced: the cycle's model, tokens over every call, latency, outcome."""
    usage = result.usage
    attributes: Attributes = {
        "om.outcome": outcome_of(result), "om.attempts": result.attempts,
        "om.input_tokens": usage.input_tokens, "om.output_tokens": usage.output_tokens,
        "om.cached_input_tokens": usage.cached_input_tokens,
        "om.cache_write_input_tokens": usage.cache_write_input_tokens,
        "om.latency_ms": max(result.completed_at - result.started_at, 0), "om.warnings": len(result.warnings or ()),
    }
    if result.model:
        attributes["om.model"] = result.model
    if isinstance(result, ReflectResult) and result.compression_level is not None:
        attributes["om.compression_level"] = result.compression_level
    return attributes


def applied_attributes(result: ObserveResult | ReflectResult, outcome: str, tenant_ids: bool) -> Attributes:
    """The processor's side: the result's outcome there (applied, failed, stale, duplicate)."""
    return {"om.cycle_id": result.cycle_id, "om.role": role_of(result), "om.mode": result.mode,
            "om.outcome": outcome, "om.input_tokens": result.usage.input_tokens,
            "om.output_tokens": result.usage.output_tokens,
            "om.cached_input_tokens": result.usage.cached_input_tokens,
            } | _tenant(tenant_ids, result.key, result.resource_id, None)


def call_attributes(role: str, model: str, provider: str) -> Attributes:
    return {"gen_ai.operation.name": "chat", "gen_ai.provider.name": provider, "gen_ai.request.model": model,
            "om.role": role}


def reply_attributes(model: str, input_tokens: int, output_tokens: int, cached_input_tokens: int,
                     finish_reason: str | None, attempts: int, latency_ms: int,
                     cache_write_input_tokens: int = 0) -> Attributes:
    attributes: Attributes = {
        "gen_ai.response.model": model, "gen_ai.usage.input_tokens": input_tokens,
        "gen_ai.usage.output_tokens": output_tokens, "gen_ai.usage.cache_read.input_tokens": cached_input_tokens,
        "gen_ai.usage.cache_creation.input_tokens": cache_write_input_tokens,
        "om.attempts": attempts, "om.latency_ms": latency_ms, "om.outcome": "ok",
    }
    if finish_reason:
        attributes["gen_ai.response.finish_reasons"] = [finish_reason]
    return attributes


def event_attributes(event: Any) -> Attributes:
    """A lifecycle event, as a span event: its type is the event's name; only closed fields here."""
    attributes: Attributes = {}
    for name in ("cycle_id", "operation_type", "triggered_by"):
        value = getattr(event, name, None)
        if isinstance(value, str):
            attributes[f"om.{name}"] = value
    return attributes


def _tenant(opted_in: bool, key: str, resource_id: str | None, thread_id: str | None) -> Attributes:
    if not opted_in:
        return {}
    ids = {"om.key": key, "om.resource_id": resource_id, "om.thread_id": thread_id}
    return {name: value for name, value in ids.items() if value}
