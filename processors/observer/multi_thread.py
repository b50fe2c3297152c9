"""The multi-thread Observer for resource scope (spec §4.9, §5.1, §5.4).

One call observes several threads of one resource: the history has a ``<thread id="…">``
section per thread (attachment numbers shared, tool pairing per thread) and the answer is
expected to mirror it. A thread the model skipped comes back with empty observations. The
threads are split into batches of ``max_tokens_per_batch`` (``batches.py``), one call each, in
parallel; a failed or degenerate batch fails the whole cycle, as in Mastra.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from processors.extraction.inline import parse_inline_values, strip_inline_sections
from processors.extraction.pipeline import builtin_extractors, split_extractors
from processors.extraction.types import ExtractorLike
from processors.observer.calls import DEGENERATE, ask, count_input
from processors.observer.checks import format_warnings
from processors.observer.degenerate import drop_repeated_lines, is_degenerate, truncate_long_lines
from processors.observer.inputs import bounded_previous, render_options
from processors.observer.batches import thread_batches
from processors.observer.model_choice import resolve_model
from processors.model_port import ModelCall, ModelClient, TokenCounter
from processors.observer.parse import observation_blocks
from processors.observer.render import HISTORY_HEADING, HistoryRenderer
from processors.observer.system_prompt import observer_system_prompt
from processors.observer.task_prompt import multi_thread_task_prompt
from processors.observer.types import ObserverOutcome, ObserverRequest, ThreadInput, ThreadObservations

_THREAD = re.compile(r'<thread id="([^"]+)">(.*?)(?:</thread>|(?=<thread id=)|\Z)', re.S)
_STRAY_THREAD_TAG = re.compile(r"</?thread\b[^>]{0,200}>")


def render_threads(threads: list[ThreadInput], renderer: HistoryRenderer) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = [
        {"type": "text", "text": f"{HISTORY_HEADING}\n\nThe history below covers {len(threads)} thread(s)."}
    ]
    for thread in threads:
        parts.append({"type": "text", "text": f'<thread id="{thread.thread_id}">'})
        parts.extend(renderer.render_body(thread.messages))
        parts.append({"type": "text", "text": "</thread>"})
    return parts


NO_SECTIONS = "observer answer without a <thread> section"


def parse_multi_thread_answer(
    text: str, thread_ids: list[str], extractors: list[ExtractorLike]
) -> tuple[dict[str, ThreadObservations], list[str], bool]:
    """``(per-thread results, warnings, degenerate)``; every requested thread gets an entry."""
    text = truncate_long_lines(text)
    if is_degenerate(text):
        return {tid: ThreadObservations() for tid in thread_ids}, ["degenerate (repetitive) output"], True
    results = {tid: ThreadObservations() for tid in thread_ids}
    sections = _THREAD.findall(text)
    warnings: list[str] = [] if sections else [NO_SECTIONS]
    for thread_id, body in sections:
        if thread_id not in results:
            warnings.append(f"answer has a section for unknown thread {thread_id!r}; ignored")
            continue
        results[thread_id] = _thread_result(body, extractors)
        notes, repeated = drop_repeated_lines(results[thread_id].observations)
        if repeated:
            results[thread_id].observations = notes
            warnings.append(f"thread {thread_id}: {repeated} repeated line(s) dropped")
        warnings.extend(f"thread {thread_id}: {w}" for w in format_warnings(results[thread_id].observations))
    missing = [tid for tid, result in results.items() if not result.observations]
    if missing:
        warnings.append(f"no observations for thread(s) {', '.join(missing)}")
    return results, warnings, False


async def run_multi_thread_observer(request: ObserverRequest, llm: ModelClient, counter: TokenCounter) -> ObserverOutcome:
    """One call per batch of threads (``batches.py``), all in parallel; one result per thread."""
    batches = thread_batches(request.threads, counter, request.settings.max_tokens_per_batch)
    outcomes = await asyncio.gather(*(_observe_batch(request, batch, llm, counter) for batch in batches))
    return _merged(list(outcomes))


async def _observe_batch(
    request: ObserverRequest, threads: list[ThreadInput], llm: ModelClient, counter: TokenCounter
) -> ObserverOutcome:
    settings = request.settings
    inline_custom, _ = split_extractors(settings.extractors)
    inline = builtin_extractors(
        current_task=settings.current_task, suggested_response=settings.suggested_response,
        thread_title=settings.thread_title,
    ) + inline_custom
    all_messages = [m for thread in threads for m in thread.messages]
    try:
        model = resolve_model(settings.model, count_input(counter, all_messages))
    except ValueError as exc:
        return ObserverOutcome(error=str(exc))
    history = render_threads(threads, HistoryRenderer(counter, render_options(request, model)))
    previous, truncated = bounded_previous(request, counter)
    priors = {thread.thread_id: thread.prior for thread in threads}
    call = ModelCall(
        role="observer", model=model,
        messages=[
            {"role": "system", "content": observer_system_prompt(inline, multi_thread=True, instruction=settings.instruction)},
            {"role": "user", "content": multi_thread_task_prompt(previous, priors, inline, truncated=truncated)},
            {"role": "user", "content": history},
        ],
        temperature=settings.temperature,
        max_output_tokens=settings.max_output_tokens,
        provider_options=settings.provider_options,
    )
    ids = list(priors)
    asked = await ask(llm, call, lambda text: parse_multi_thread_answer(text, ids, inline),
                      lambda p: DEGENERATE if p[2] else NO_SECTIONS if NO_SECTIONS in p[1] else None)
    outcome = ObserverOutcome(usage=asked.usage, attempts=asked.attempts, model=model, degenerate=asked.degenerate,
                              previous_truncated=truncated, error=asked.error)
    if asked.parsed is not None and not asked.error:
        outcome.threads, outcome.warnings = asked.parsed[0], asked.parsed[1]
    return outcome


def _merged(outcomes: list[ObserverOutcome]) -> ObserverOutcome:
    """The batches as one cycle: any failure fails it (Mastra awaits every batch), usage is summed."""
    merged = ObserverOutcome()
    for outcome in outcomes:
        merged.usage += outcome.usage
        merged.attempts += outcome.attempts
        merged.degenerate = merged.degenerate or outcome.degenerate
        merged.previous_truncated = merged.previous_truncated or outcome.previous_truncated
        merged.error = merged.error or outcome.error
        merged.threads.update(outcome.threads)
        merged.warnings.extend(outcome.warnings)
    merged.model = ", ".join(dict.fromkeys(o.model for o in outcomes if o.model))
    if merged.error:
        merged.threads, merged.warnings = {}, []
    return merged


def _thread_result(body: str, extractors: list[ExtractorLike]) -> ThreadObservations:
    values, failures = parse_inline_values(body, extractors)
    rest = _STRAY_THREAD_TAG.sub("", strip_inline_sections(body, [e.slug for e in extractors]))
    observations, _ = observation_blocks(rest) if "<observations>" in rest.lower() else (rest.strip(), [])
    builtins = {"current-task", "suggested-response", "thread-title"}
    return ThreadObservations(
        observations=observations,
        current_task=_text(values.get("current-task")),
        suggested_response=_text(values.get("suggested-response")),
        thread_title=_text(values.get("thread-title")),
        extracted={k: v for k, v in values.items() if k not in builtins},
        extraction_failures=failures,
    )


def _text(value: Any) -> str | None:
    return str(value).strip() or None if value is not None else None
