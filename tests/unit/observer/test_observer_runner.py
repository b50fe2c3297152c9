from processors.model_port import ModelCallError
from processors.observer.previous import bound_observations, prior_observations_text
from processors.observer.runner import run_observer
from processors.observer.types import ObserverMode, ObserverRequest, ObserverSettings, PriorMetadata
from processors.config import ExtractorSpec
from processors.tokens import get_counter
from schemas.messages import ChatMessage
from tests.unit._om_fakes import ScriptedModel

COUNTER = get_counter()
GOOD = "<observations>\nDate: Dec 4, 2024\n* 🔴 (17:33) User stated hi.\n</observations>"
LOOP = "<observations>\n" + "* 🟡 (10:00) the very same long sentence is written again\n" * 300 + "</observations>"
MESSAGES = [ChatMessage(id="1", thread_id="t", role="user", created_at=1733333580000,
                        parts=[{"type": "text", "text": "hi"}])]


def _request(**kw) -> ObserverRequest:
    settings = kw.pop("settings", ObserverSettings(model="openai/gpt-4o"))
    return ObserverRequest(messages=MESSAGES, settings=settings, **kw)


async def test_s33_degenerate_twice_skips_the_cycle_after_two_calls():
    model = ScriptedModel(LOOP, LOOP)
    outcome = await run_observer(_request(), model, COUNTER)
    assert outcome.degenerate and outcome.error and outcome.observations == "" and len(model.calls) == 2


async def test_degenerate_once_then_good_is_accepted():
    model = ScriptedModel(LOOP, GOOD)
    outcome = await run_observer(_request(), model, COUNTER)
    assert not outcome.degenerate and outcome.observations.endswith("User stated hi.") and outcome.attempts == 2


async def test_s32_model_error_comes_back_as_outcome_error():
    model = ScriptedModel(ModelCallError("401 unauthorized", transient=False, attempts=1))
    outcome = await run_observer(_request(), model, COUNTER)
    assert outcome.error == "401 unauthorized" and outcome.attempts == 1


async def test_prompt_sections_for_sync_with_prior_metadata_and_extractors():
    settings = ObserverSettings(model="openai/gpt-4o", thread_title=True, instruction="Be brief.",
                                extractors=[ExtractorSpec(name="Mood", instructions="the mood")])
    prior = PriorMetadata(current_task="plan trip", thread_title="Rome", extracted={"mood": "calm"})
    model = ScriptedModel(GOOD + "\n<mood>\nhappy\n</mood>\n<current-task>\nbook\n</current-task>")
    outcome = await run_observer(_request(settings=settings, prior=prior, prior_observations="* 🔴 (09:00) old"), model, COUNTER)
    system, task, history = (m["content"] for m in model.calls[0].messages)
    assert "<current-task>" in system and "<thread-title>" in system and "<mood>" in system
    assert system.endswith("=== CUSTOM INSTRUCTIONS ===\nBe brief.")
    assert "## Previous Observations\n\n* 🔴 (09:00) old" in task
    assert "<current-task>\nplan trip\n</current-task>" in task and "<thread-title>\nRome\n</thread-title>" in task
    assert "<mood>\ncalm\n</mood>" in task
    assert history[0]["text"] == "## New Message History to Observe"
    assert outcome.extracted == {"mood": "happy"} and outcome.current_task == "book"


async def test_sync_call_sends_the_previous_task_and_reply_as_tagged_blocks_to_write_again():
    prior = PriorMetadata(current_task="Primary: plan the Rome trip", suggested_response="Ask which dates suit")
    model = ScriptedModel(GOOD)
    await run_observer(_request(prior=prior), model, COUNTER)
    task = model.calls[0].messages[1]["content"]
    metadata = task.split("## Prior Thread Metadata\n\n")[1].split("\n\n## Your Task")[0]
    assert metadata.startswith(
        "<current-task>\nPrimary: plan the Rome trip\n</current-task>\n\n"
        "<suggested-response>\nAsk which dates suit\n</suggested-response>\n\n"
    )
    assert "- prior" not in metadata and metadata.count("plan the Rome trip") == 1
    assert metadata.endswith("Write each of these blocks again in your answer: changed where the new "
                             "messages change it, as it is where it still holds.")


async def test_buffer_mode_drops_continuation_hints_and_asks_for_output():
    model = ScriptedModel(GOOD)
    await run_observer(_request(mode=ObserverMode.BUFFER, buffered_observations=["* 🟡 (11:00) chunk"],
                                prior_observations="* 🔴 (09:00) old"), model, COUNTER)
    system, task, _ = (m["content"] for m in model.calls[0].messages)
    assert "<current-task>" not in system and "<suggested-response>" not in system
    assert "--- BUFFERED (pending activation) ---" in task and task.endswith("Always output an <observations> block, even if it only repeats nothing new.")


def test_previous_observations_bounded_keeping_newest_and_important_lines():
    lines = [f"* {'🔴' if i % 10 == 0 else '🟡'} (10:{i % 60:02d}) note number {i} with some words" for i in range(200)]
    text = "\n".join(lines)
    bounded, truncated = bound_observations(text, 300, COUNTER)
    assert truncated and COUNTER.count_string(bounded) <= 300
    assert bounded.endswith(lines[-1]) and "observations truncated here]" in bounded
    assert "note number 190 " in bounded  # an older 🔴 line kept
    assert bound_observations(text, False, COUNTER) == (text, False)
    assert bound_observations(text, 0, COUNTER) == ("", True)
    assert bound_observations("short", 300, COUNTER) == ("short", False)


def test_pending_reflection_replaces_the_lines_it_covers():
    text = prior_observations_text("a\nb\nc\nd", [], ("R", 2))
    assert text == "R\n\nc\nd"
