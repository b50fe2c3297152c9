"""The Reflector's custom extracted values (``reflection.extract``), as Mastra 1.31 carries them.

Source: ``@mastra/memory`` 1.31.0 ``reflector-agent.ts`` ``buildReflectorPrompt`` (the request ends
with ``## Prior Extracted Values`` — one ``<slug>`` block per extractor with a previous value, in
the order of the composed extractors: built-ins, then ``reflection.extract`` as configured — and
``## Additional Output Sections``, the inline extractors' templates) and ``parseReflectorOutput``
(inline values read back from the answer); ``reflector-runner.ts`` (``persistThreadExtractedValues``
merges the values into the thread's metadata after a synchronous and after a buffered reflection;
the end markers carry ``extractedValues`` and ``extractionFailures``).
"""

from __future__ import annotations

import pytest

from processors.config import ExtractorSpec, OMConfig
from processors.reflector.runner import run_reflector
from processors.reflector.types import (
    ReflectorMode,
    ReflectorRequest,
    ReflectorSettings,
)
from processors.tokens import get_counter
from schemas.jobs import PriorMetadata, ReflectJob
from streams.harness.echo_model import respond
from streams.llm.jobs import run_job
from tests.unit._om_fakes import ScriptedModel
from tests.unit.machine.core_driver import MINUTE, T0, Driver, message

COUNTER = get_counter()
SOURCE = "Date: Dec 1, 2024\n* 🔴 (10:01) User stated they are planning a trip to Rome.\n* 🟡 (10:02) Assistant listed hotels."
ANSWER = (
    "<observations>\nDate: Dec 1, 2024\n* 🔴 (10:01) User plans a Rome trip.\n</observations>\n"
    "<current-task>\nPrimary: choose a hotel in Rome\n</current-task>\n"
    "<mood>\nexcited\n</mood>"
)
MOOD = ExtractorSpec(name="Mood", instructions="The user's mood, in one word.")
BUDGET = ExtractorSpec(name="Budget", instructions="The trip budget.",
                       schema={"type": "object", "properties": {"eur": {"type": "number"}}})
PREVIOUS = {"current-task": "Primary: plan the trip", "mood": "calm", "budget": {"eur": 1200.0}}


def _request(mode: ReflectorMode, extractors: list[ExtractorSpec]) -> ReflectorRequest:
    settings = ReflectorSettings(model="openai/gpt-4o", observation_tokens=10_000, extractors=extractors)
    return ReflectorRequest(mode=mode, observations=SOURCE, prior_extracted=PREVIOUS, settings=settings)


async def test_sync_request_ends_with_prior_values_then_the_sections_asked_for():
    model = ScriptedModel(ANSWER)
    await run_reflector(_request(ReflectorMode.SYNC, [MOOD]), model, COUNTER)
    prompt = model.calls[0].messages[1]["content"]
    prior_at, sections_at = prompt.index("## Prior Extracted Values"), prompt.index("## Additional Output Sections")
    assert prior_at < sections_at
    sections = prompt[sections_at:]
    assert [slug for slug in ("current-task", "suggested-response", "mood") if f"<{slug}>\n" in sections] == [
        "current-task", "suggested-response", "mood"]
    assert ("<mood>\nThe user's mood, in one word.\nWrite this section when the observations give you something "
            "for <mood>, and put only that inside the tag.\n</mood>") in sections


async def test_background_request_asks_only_for_the_custom_sections_and_still_ends_with_always_output():
    model = ScriptedModel(ANSWER)
    await run_reflector(_request(ReflectorMode.BACKGROUND, [MOOD]), model, COUNTER)
    prompt = model.calls[0].messages[1]["content"]
    sections = prompt[prompt.index("## Additional Output Sections"):]
    assert "<mood>\n" in sections and "<current-task>" not in sections and "<suggested-response>" not in sections
    assert prompt.endswith("Always output an <observations> block.")


async def test_no_section_asked_for_means_no_sections_block():
    model = ScriptedModel(ANSWER)
    await run_reflector(_request(ReflectorMode.BACKGROUND, []), model, COUNTER)
    assert "## Additional Output Sections" not in model.calls[0].messages[1]["content"]


async def test_prior_values_follow_mastras_extractor_order_structured_and_inline_mixed():
    model = ScriptedModel(ANSWER, '{"budget": {"eur": 1500}}')
    outcome = await run_reflector(_request(ReflectorMode.SYNC, [BUDGET, MOOD]), model, COUNTER)
    prompt = model.calls[0].messages[1]["content"]
    prior = prompt[prompt.index("## Prior Extracted Values"):prompt.index("Carry these values forward")]
    assert prior == ("## Prior Extracted Values\n\n<current-task>\nPrimary: plan the trip\n</current-task>\n\n"
                     '<budget>\n{"eur":1200}\n</budget>\n\n<mood>\ncalm\n</mood>\n\n')  # JSON.stringify's 1200
    assert outcome.extracted == {"mood": "excited", "budget": {"eur": 1500}}


async def test_the_worker_returns_the_custom_values_and_failures_on_the_result():
    job = ReflectJob(cycle_id="c", key="thread:t", thread_id="t", resource_id="r", record_id="rec", generation=0,
                     issued_at=0, mode="sync", observations=SOURCE, line_count=3, input_tokens=100,
                     target_tokens=10_000, start_level=0,
                     prior_metadata=PriorMetadata(extracted={"mood": "calm"}))
    config = OMConfig.model_validate({"model": "openai/gpt-4o", "reflection": {"extract": [
        {"name": "Mood", "instructions": "The user's mood."},
        {"name": "Budget", "instructions": "The trip budget.", "schema": {"type": "number"}},
    ]}})
    model = ScriptedModel(ANSWER + "\n<budget>\nabout a thousand\n</budget>")
    result = await run_job(job, config, model, COUNTER)
    assert "<mood>\ncalm\n</mood>" in model.calls[0].messages[1]["content"]
    assert result.ok and result.extracted_values == {"mood": "excited"}


@pytest.mark.parametrize("observation, mode, end", [
    ({"message_tokens": 500, "buffer_tokens": False}, "sync", "observation-end"),  # no async reflection either
    ({"message_tokens": 500}, "background", "buffering-end"),  # defaults: buffered at half the threshold
])
def test_the_core_merges_a_reflections_values_into_the_thread_and_puts_them_on_its_end_event(observation, mode, end):
    d = Driver(OMConfig.model_validate({"observation": observation, "reflection": {"observation_tokens": 400}}))
    i = 0
    while not any(j.kind == "reflect" for j in d.jobs):
        d.feed(message(f"m{i}", T0 + i * MINUTE))
        i += 1
        for job in [x for x in d.jobs if x.kind == "observe"]:
            d.jobs.remove(job)
            d.feed(respond(job).model_copy(update={"extracted_values": {"mood": "calm", "topic": "Rome"}}))
    job = next(j for j in d.jobs if j.kind == "reflect")
    assert job.mode == mode and job.prior_metadata.extracted == {"mood": "calm", "topic": "Rome"}
    d.jobs.remove(job)
    failures = [{"slug": "budget", "error": "not a number"}]
    d.feed(respond(job).model_copy(update={"extracted_values": {"mood": "excited", "empty": ""},
                                           "extraction_failures": failures}))
    assert d.state.threads["t1"].extracted == {"mood": "excited", "topic": "Rome"}  # merged; empty kept out
    [event] = [e for e in d.events(end) if e.operation_type == "reflection"]
    assert event.extracted_values == {"mood": "excited", "empty": ""}
    assert [f.model_dump() for f in event.extraction_failures] == failures
