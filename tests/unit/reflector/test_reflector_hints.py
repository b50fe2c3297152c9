"""The synchronous Reflector carries the thread's values forward and writes the current task, as
Mastra 1.31's does; a background reflection is asked for neither hint (issue 17)."""

from __future__ import annotations

from processors.config import ExtractorSpec, OMConfig
from processors.reflector.runner import run_reflector
from processors.reflector.types import ReflectorMode, ReflectorRequest, ReflectorSettings
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
    "<suggested-response>\nAsk which neighbourhood the user prefers\n</suggested-response>"
)
PREVIOUS = {"current-task": "Primary: plan the trip", "suggested-response": "Offer hotel options", "mood": "calm"}


def _request(mode: ReflectorMode) -> ReflectorRequest:
    settings = ReflectorSettings(model="openai/gpt-4o", observation_tokens=10_000,
                                 extractors=[ExtractorSpec(name="Mood", instructions="the user's mood")])
    return ReflectorRequest(mode=mode, observations=SOURCE, prior_extracted=PREVIOUS, settings=settings)


async def test_sync_reflection_sees_previous_values_as_blocks_and_writes_the_current_task():
    model = ScriptedModel(ANSWER)
    outcome = await run_reflector(_request(ReflectorMode.SYNC), model, COUNTER)
    system, prompt = (m["content"] for m in model.calls[0].messages)
    assert "<current-task>" in system and "<suggested-response>" in system
    assert (
        "## Prior Extracted Values\n\n<current-task>\nPrimary: plan the trip\n</current-task>\n\n"
        "<suggested-response>\nOffer hotel options\n</suggested-response>\n\n<mood>\ncalm\n</mood>\n\n"
        "Carry these values forward"
    ) in prompt
    assert outcome.current_task == "Primary: choose a hotel in Rome"
    assert outcome.suggested_response == "Ask which neighbourhood the user prefers"
    assert "current-task" not in outcome.observations and "choose a hotel" not in outcome.observations


async def test_background_reflection_is_asked_for_no_hint_but_keeps_custom_values():
    model = ScriptedModel(ANSWER)
    outcome = await run_reflector(_request(ReflectorMode.BACKGROUND), model, COUNTER)
    system, prompt = (m["content"] for m in model.calls[0].messages)
    assert "<current-task>" not in system and "<suggested-response>" not in system
    assert "plan the trip" not in prompt and "Offer hotel options" not in prompt
    assert "## Prior Extracted Values\n\n<mood>\ncalm\n</mood>" in prompt
    assert outcome.current_task is None and outcome.suggested_response is None


async def test_the_worker_passes_the_jobs_values_and_returns_the_current_task():
    job = ReflectJob(cycle_id="c", key="thread:t", thread_id="t", resource_id="r", record_id="rec", generation=0,
                     issued_at=0, mode="sync", observations=SOURCE, line_count=3, input_tokens=100,
                     target_tokens=10_000, start_level=0,
                     prior_metadata=PriorMetadata(current_task="Primary: plan the trip"))
    model = ScriptedModel(ANSWER)
    result = await run_job(job, OMConfig(model="openai/gpt-4o"), model, COUNTER)
    assert "<current-task>\nPrimary: plan the trip\n</current-task>" in model.calls[0].messages[1]["content"]
    assert result.ok and result.current_task == "Primary: choose a hotel in Rome"


def test_the_core_sends_the_threads_hints_and_keeps_the_ones_the_reflector_left_out():
    d = Driver(OMConfig.model_validate({"observation": {"message_tokens": 500, "buffer_tokens": False},
                                        "reflection": {"observation_tokens": 800}}))
    i = 0
    while not any(j.kind == "reflect" for j in d.jobs):
        d.feed(message(f"m{i}", T0 + i * MINUTE))
        i += 1
        for job in [x for x in d.jobs if x.kind == "observe"]:
            result = respond(job)
            d.jobs.remove(job)
            d.feed(result.model_copy(update={"current_task": "Primary: plan", "suggested_response": "Ask dates"}))
    job = next(j for j in d.jobs if j.kind == "reflect")
    assert job.mode == "sync" and job.prior_metadata is not None
    assert (job.prior_metadata.current_task, job.prior_metadata.suggested_response) == ("Primary: plan", "Ask dates")
    d.jobs.remove(job)
    d.feed(respond(job).model_copy(update={"current_task": "Primary: book the hotel"}))
    hints = d.state.threads["t1"]
    assert (hints.current_task, hints.suggested_response) == ("Primary: book the hotel", "Ask dates")
