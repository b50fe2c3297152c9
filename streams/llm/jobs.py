"""Running one job: the LLM worker's whole business, with no OM state (ARCHITECTURE rule 4).

A job becomes an Observer or Reflector request (the prompt/parse logic lives in ``processors``),
the model is called through a :class:`ModelClient`, and the outcome becomes a result for the
processor. Every failure — transient errors after their retries, degenerate output, a parse
problem — is a result with ``ok=False``: the processor always hears back, so a cycle never hangs. Transform hooks (``streams.hooks.transform``)
run around each call; a failing hook fails the cycle the same way.
"""

from __future__ import annotations

import time
from collections import defaultdict

from processors.config import OMConfig
from processors.model_port import ModelClient
from processors.observer.runner import run_observer
from processors.observer.types import ObserverMode, ObserverRequest, ObserverSettings, ThreadInput
from processors.reflector.runner import run_reflector
from processors.reflector.types import ReflectorMode, ReflectorRequest, ReflectorSettings
from processors.tokens import TokenCounter
from processors.extraction.working_memory import working_memory_extractor
from schemas.jobs import ObserveJob, ObserveResult, PriorMetadata, ReflectJob, ReflectResult
from streams import tracing
from streams.hooks.transform import NO_HOOKS, HookFailed, TransformHooks


def _now_ms() -> int:
    return int(time.time() * 1000)


def observer_settings(config: OMConfig) -> ObserverSettings:
    return ObserverSettings.from_config(config.observation, model=config.observer_model())


def reflector_settings(config: OMConfig) -> ReflectorSettings:
    section = config.reflection
    settings = section.model_settings
    hints = section.continuation_hints
    return ReflectorSettings(
        current_task=hints if isinstance(hints, bool) else hints.current_task,
        suggested_response=hints if isinstance(hints, bool) else hints.suggested_response,
        model=config.reflector_model(),
        temperature=settings.temperature if settings else None,
        max_output_tokens=settings.max_output_tokens if settings else None,
        provider_options=section.provider_options,
        observation_tokens=config.resolved.reflection_tokens,
        buffer_activation=config.resolved.reflection_buffer_activation or 1.0,
        instruction=section.instruction,
        extractors=list(section.extract or []),
    )


async def run_observe_job(job: ObserveJob, config: OMConfig, llm: ModelClient,
                          counter: TokenCounter, hooks: TransformHooks = NO_HOOKS) -> ObserveResult:
    started = _now_ms()
    messages = await hooks.before_observation(job)
    if not messages:  # §2.7: nothing left to observe; the messages still count as observed
        return ObserveResult(cycle_id=job.cycle_id, key=job.key, generation=job.generation, mode=job.mode,
                             ok=True, started_at=started, completed_at=_now_ms())
    job = job.model_copy(update={"messages": messages})
    settings = observer_settings(config)
    if not job.continuation_hints:
        settings = settings.model_copy(update={"current_task": False, "suggested_response": False})
    if config.observation.manage_working_memory:
        extractor = working_memory_extractor(config.observation.working_memory_template, job.working_memory)
        settings = settings.model_copy(update={"extractors": [*settings.extractors, extractor]})
    request = ObserverRequest(
        mode=_observer_mode(job),
        messages=job.messages if job.scope == "thread" else [],
        threads=_threads(job) if job.scope == "resource" else [],
        prior_observations=job.prior_observations,
        buffered_observations=job.buffered_observations,
        pending_reflection=job.pending_reflection,
        previous_truncated=bool(job.previous_truncated),
        prior=job.prior_metadata,
        settings=settings,
        tz=job.timezone,
    )
    outcome = await run_observer(request, llm, counter)
    failed = outcome.error or ("the Observer repeated itself (degenerate output)" if outcome.degenerate else None)
    observations = await hooks.after_observation(_observations(job, outcome), job) if failed is None else ""
    return ObserveResult(
        cycle_id=job.cycle_id, key=job.key, generation=job.generation, mode=job.mode,
        ok=failed is None, error=failed, started_at=started, completed_at=_now_ms(),
        usage=outcome.usage, attempts=outcome.attempts, degenerate=outcome.degenerate,
        model=outcome.model or None, resource_id=job.resource_id,
        observations=observations, warnings=outcome.warnings or None,
        current_task=outcome.current_task, suggested_response=outcome.suggested_response,
        thread_title=outcome.thread_title, extracted_values=outcome.extracted or None,
        extraction_failures=[f.model_dump() for f in outcome.extraction_failures] or None,
        thread_values=_thread_values(outcome) if job.scope == "resource" and failed is None else None,
    )


async def run_reflect_job(job: ReflectJob, config: OMConfig, llm: ModelClient,
                          counter: TokenCounter, hooks: TransformHooks = NO_HOOKS) -> ReflectResult:
    started = _now_ms()
    request = ReflectorRequest(
        mode=ReflectorMode.SYNC if job.mode == "sync" else ReflectorMode.BACKGROUND,
        observations=await hooks.before_reflection(job.observations, job),
        observation_token_count=job.input_tokens,
        start_level=job.start_level,
        target_tokens=job.target_tokens,
        prior_extracted=_prior_values(job.prior_metadata),
        settings=reflector_settings(config),
    )
    outcome = await run_reflector(request, llm, counter)
    ok = outcome.error is None
    return ReflectResult(
        cycle_id=job.cycle_id, key=job.key, generation=job.generation, mode=job.mode,
        ok=ok, error=outcome.error, started_at=started, completed_at=_now_ms(),
        usage=outcome.usage, attempts=outcome.attempts, warnings=outcome.warnings or None,
        model=outcome.model or None, resource_id=job.resource_id,
        observations=await hooks.after_reflection(outcome.observations, job) if ok else "",
        current_task=outcome.current_task, suggested_response=outcome.suggested_response,
        extracted_values=outcome.extracted or None,
        extraction_failures=[f.model_dump() for f in outcome.extraction_failures] or None,
        compression_level=outcome.level,
    )


@tracing.traced_job
async def run_job(job: ObserveJob | ReflectJob, config: OMConfig, llm: ModelClient,
                  counter: TokenCounter, hooks: TransformHooks = NO_HOOKS) -> ObserveResult | ReflectResult:
    started = _now_ms()
    try:
        if isinstance(job, ObserveJob):
            return await run_observe_job(job, config, llm, counter, hooks)
        return await run_reflect_job(job, config, llm, counter, hooks)
    except HookFailed as failure:
        kind = ObserveResult if isinstance(job, ObserveJob) else ReflectResult
        return kind(cycle_id=job.cycle_id, key=job.key, generation=job.generation, mode=job.mode, ok=False,
                    error=str(failure), started_at=started, completed_at=_now_ms())


def _observer_mode(job: ObserveJob) -> ObserverMode:
    if job.scope == "resource":
        return ObserverMode.MULTI_THREAD
    return ObserverMode.BUFFER if job.mode == "buffer" else ObserverMode.SYNC


def _threads(job: ObserveJob) -> list[ThreadInput]:
    by_thread = defaultdict(list)
    for message in job.messages:
        by_thread[message.thread_id].append(message)
    return [ThreadInput(thread_id=t, messages=m, prior=(job.thread_priors or {}).get(t, PriorMetadata()))
            for t, m in by_thread.items()]


def _thread_values(outcome) -> dict[str, PriorMetadata] | None:
    """Resource scope: each thread's hints, title and extracted values, for its own metadata (§4.9).

    A thread the model skipped (no notes) is left out, so its previous values stay."""
    return {
        thread_id: PriorMetadata(current_task=obs.current_task, suggested_response=obs.suggested_response,
                                 thread_title=obs.thread_title, extracted=obs.extracted)
        for thread_id, obs in outcome.threads.items()
        if obs.observations.strip()
    } or None


def _prior_values(prior: PriorMetadata | None) -> dict:
    """A thread's values by slug, built-ins included, as the Reflector carries them forward."""
    if prior is None:
        return {}
    builtins = {"current-task": prior.current_task, "suggested-response": prior.suggested_response}
    return {**prior.extracted, **{slug: value for slug, value in builtins.items() if value}}


def _observations(job: ObserveJob, outcome) -> str:
    """Resource scope: each thread's notes wrapped in its own ``<thread id>`` section (§4.9)."""
    if job.scope == "thread" or not outcome.threads:
        return outcome.observations
    return "\n".join(
        f'<thread id="{thread_id}">\n{obs.observations}\n</thread>'
        for thread_id, obs in outcome.threads.items()
        if obs.observations.strip()
    )
