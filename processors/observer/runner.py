"""One Observer cycle, end to end but IO-free: render, prompt, call, parse, extract.

The worker supplies the model client; everything the model sees and everything we keep of its
answer is decided here.
"""

from __future__ import annotations

from processors.extraction.pipeline import builtin_extractors, split_extractors
from processors.extraction.structured import run_structured
from processors.observer.calls import DEGENERATE, ask, count_input
from processors.observer.model_choice import resolve_model
from processors.model_port import ModelCall, ModelClient, TokenCounter, default_counter
from processors.observer.parse import ParsedAnswer, parse_observer_answer
from processors.observer.inputs import bounded_previous, render_options
from processors.observer.multi_thread import run_multi_thread_observer
from processors.observer.render import HistoryRenderer
from processors.observer.system_prompt import observer_system_prompt
from processors.observer.task_prompt import task_prompt
from processors.observer.types import ObserverMode, ObserverOutcome, ObserverRequest


async def run_observer(
    request: ObserverRequest, llm: ModelClient, counter: TokenCounter | None = None
) -> ObserverOutcome:
    """Never raises for model trouble: failures come back as ``outcome.error``."""
    counter = counter or default_counter()
    if request.mode is ObserverMode.MULTI_THREAD:
        return await run_multi_thread_observer(request, llm, counter)
    settings = request.settings
    buffering = request.mode is ObserverMode.BUFFER
    inline_custom, structured = split_extractors(settings.extractors)
    inline = builtin_extractors(
        current_task=settings.current_task and not buffering,
        suggested_response=settings.suggested_response and not buffering,
        thread_title=settings.thread_title,
    ) + inline_custom
    try:
        model = resolve_model(settings.model, count_input(counter, request.messages))
    except ValueError as exc:
        return ObserverOutcome(error=str(exc))
    renderer = HistoryRenderer(counter, render_options(request, model))
    history = renderer.render(request.messages)
    previous, truncated = bounded_previous(request, counter)
    call = ModelCall(
        role="observer",
        model=model,
        messages=[
            {"role": "system", "content": observer_system_prompt(inline, instruction=settings.instruction)},
            {"role": "user", "content": task_prompt(previous, request.prior, inline, truncated=truncated,
                                                     always_output=buffering)},
            {"role": "user", "content": history},
        ],
        temperature=settings.temperature,
        max_output_tokens=settings.max_output_tokens,
        provider_options=settings.provider_options,
    )
    asked = await ask(llm, call, lambda text: parse_observer_answer(text, inline), unusable)
    outcome = ObserverOutcome(usage=asked.usage, attempts=asked.attempts, model=model,
                              degenerate=asked.degenerate, previous_truncated=truncated, error=asked.error)
    if asked.error or asked.parsed is None:
        return outcome
    _fill(outcome, asked.parsed)
    extra = await run_structured(llm, call, asked.answer, structured, request.prior.extracted)
    outcome.extracted.update(extra.values)
    outcome.extraction_failures.extend(extra.failures)
    outcome.usage += extra.usage
    outcome.attempts += extra.attempts
    return outcome


def unusable(parsed: ParsedAnswer) -> str | None:
    if parsed.degenerate:
        return DEGENERATE
    if not parsed.notes_found:
        return "observer answer without notes (no <observations> block, no list item)"
    return None


def _fill(outcome: ObserverOutcome, parsed: ParsedAnswer) -> None:
    outcome.observations = parsed.observations
    outcome.current_task = parsed.current_task
    outcome.suggested_response = parsed.suggested_response
    outcome.thread_title = parsed.thread_title
    outcome.extracted = parsed.custom_values()
    outcome.extraction_failures = list(parsed.failures)
    outcome.warnings = list(parsed.warnings)
