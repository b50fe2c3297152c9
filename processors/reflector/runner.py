"""One Reflector cycle, IO-free: pick the slice and start level, climb the ladder, extract.

As Mastra 1.31's: a synchronous reflection is asked for the current task and the suggested
response and shown their previous values; a background one is asked for neither. Custom
extractors (``reflection.extract``) get their previous values in both, and their values come back
on the outcome (inline ones parsed from the answer, structured ones from the follow-up call) for
the thread's metadata, as the Observer's do.
"""

from __future__ import annotations

from typing import Any

from processors.extraction.pipeline import builtin_extractors, split_extractors
from processors.extraction.types import ExtractorLike
from processors.extraction.structured import run_structured
from processors.observer.model_choice import resolve_model
from processors.model_port import ModelCall, ModelCallError, ModelClient, TokenCounter, default_counter
from processors.reflector.background_slice import background_slice
from processors.reflector.ladder import Attempt, ReflectionFailed, climb
from processors.reflector.levels import start_level
from processors.reflector.parse import parse_reflector_answer
from processors.reflector.prompts import reflector_prompt, reflector_system_prompt
from processors.reflector.types import ReflectorMode, ReflectorOutcome, ReflectorRequest


async def run_reflector(
    request: ReflectorRequest, llm: ModelClient, counter: TokenCounter | None = None
) -> ReflectorOutcome:
    """Never raises for model trouble: failures come back as ``outcome.error``."""
    counter = counter or default_counter()
    settings = request.settings
    background = request.mode is ReflectorMode.BACKGROUND
    total = request.observation_token_count
    if total is None:
        total = counter.count_observation_lines(request.observations)
    if request.target_tokens is not None:
        text, input_tokens = request.observations, total
        line_count, target = len(request.observations.split("\n")), request.target_tokens
    elif background:
        piece = background_slice(request.observations, total, settings.observation_tokens, settings.buffer_activation)
        text, input_tokens, line_count, target = piece.text, piece.slice_tokens, piece.line_count, piece.target
    else:
        text, input_tokens = request.observations, total
        line_count, target = len(request.observations.split("\n")), settings.observation_tokens
    outcome = ReflectorOutcome(input_token_count=input_tokens, reflected_line_count=line_count, target=target)
    try:
        model = resolve_model(settings.model, counter.count_observation_lines(text))
    except ValueError as exc:
        outcome.error = str(exc)
        return outcome
    outcome.model = model
    level0 = request.start_level if request.start_level is not None else start_level(request.mode, model)
    inline_custom, structured = split_extractors(settings.extractors)
    builtins = builtin_extractors(
        current_task=settings.current_task and not background,
        suggested_response=settings.suggested_response and not background, thread_title=False,
    )
    inline = builtins + inline_custom
    system = reflector_system_prompt(inline, settings.instruction)
    custom = [e for e in settings.extractors if e in inline_custom or e in structured]
    prior = _carried(request.prior_extracted, builtins + custom)

    def call_for(level: int) -> ModelCall:
        prompt = reflector_prompt(text, level, specific_guidance=request.guidance,
                                  prior_extracted=prior, asked=inline, always_output=background)
        return ModelCall(
            role="reflector", model=model,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": prompt}],
            temperature=settings.temperature,
            max_output_tokens=settings.max_output_tokens,
            provider_options=settings.provider_options,
        )

    answers: dict[int, str] = {}

    async def generate(level: int) -> Attempt:
        reply = await llm.complete(call_for(level))
        answers[level] = reply.text
        return Attempt(parse_reflector_answer(reply.text, inline), reply.usage, reply.attempts)

    try:
        result = await climb(generate, counter.count_observation_lines, start=level0, target=target,
                             input_is_empty=not text.strip())
    except (ModelCallError, ReflectionFailed) as exc:
        outcome.usage, outcome.attempts = getattr(exc, "usage", outcome.usage), getattr(exc, "attempts", 0)
        outcome.degenerate = getattr(exc, "degenerate", False)
        outcome.levels_tried = getattr(exc, "levels", [])
        outcome.error = str(exc)
        return outcome
    parsed = result.parsed
    outcome.observations, outcome.token_count = parsed.observations, result.tokens
    outcome.level, outcome.levels_tried, outcome.reached_target = result.level, result.levels_tried, result.reached_target
    outcome.current_task = parsed.current_task
    outcome.suggested_response = parsed.suggested_response
    outcome.extracted = parsed.custom_values()
    outcome.extraction_failures = list(parsed.failures)
    outcome.warnings = list(parsed.warnings)
    outcome.usage, outcome.attempts = result.usage, result.attempts
    extra = await run_structured(llm, call_for(result.level), answers[result.level], structured, prior)
    outcome.extracted.update(extra.values)
    outcome.extraction_failures.extend(extra.failures)
    outcome.usage += extra.usage
    outcome.attempts += extra.attempts
    return outcome


def _carried(previous: dict[str, Any], extractors: list[ExtractorLike]) -> dict[str, Any]:
    """The previous values of the sections this call asks for, in Mastra's order: the built-ins,
    then the custom extractors as configured (inline and structured mixed)."""
    return {
        e.slug: previous[e.slug]
        for e in extractors
        if e.include_previous_extraction and previous.get(e.slug) not in (None, "", [], {})
    }
