"""Transform hooks around the worker's Observer/Reflector calls (spec §2.7), through ``run_job``."""

from __future__ import annotations

import pytest

from processors.config import OMConfig
from processors.tokens import get_counter
from schemas.jobs import ObserveJob, ReflectJob
from schemas.messages import ChatMessage, TextPart
from streams.hooks.transform import REDACTION_HOOK, load_hooks
from streams.llm.jobs import run_job
from streams.settings import Settings
from tests.hook_fixtures import AFTER_MARK
from tests.unit._om_fakes import ScriptedModel

CONFIG = OMConfig(model="openai/gpt-4o")
COUNTER = get_counter()
OBSERVED = "<observations>\nDate: Dec 4, 2024\n* 🔴 (17:33) User stated a plan.\n</observations>"
REFLECTED = "<observations>\n* 🔴 shorter\n</observations>"
FIXTURES = "tests.hook_fixtures"


def observe_job(thread: str, text: str = "my key is sk-abcdefghijklmnopqrstu, mail jane@example.com") -> ObserveJob:
    message = ChatMessage(id="m1", thread_id=thread, resource_id="r1", role="user", created_at=1733333580000,
                          parts=[TextPart(text=text)])
    return ObserveJob(cycle_id="c1", key=f"thread:{thread}", thread_id=thread, resource_id="r1", record_id="rec",
                      generation=0, issued_at=0, mode="sync", messages=[message], tokens_to_observe=20)


def reflect_job() -> ReflectJob:
    return ReflectJob(cycle_id="c2", key="thread:t", thread_id="t", resource_id="r1", record_id="rec", generation=0,
                      issued_at=0, mode="sync", observations="* 🔴 a long note\n* 🟡 another", line_count=2,
                      input_tokens=100, target_tokens=50, start_level=0)


def hooks(**slots: list[str]):
    return load_hooks(Settings(hooks=slots))


def sent_text(model: ScriptedModel) -> str:
    return "\n".join(str(m["content"]) for call in model.calls for m in call.messages)


async def test_without_hooks_the_model_sees_the_messages_as_they_are() -> None:
    model = ScriptedModel(OBSERVED)
    result = await run_job(observe_job("t"), CONFIG, model, COUNTER)
    assert result.ok and "sk-abcdefghijklmnopqrstu" in sent_text(model)


async def test_the_redaction_hook_rewrites_messages_before_the_observer() -> None:
    model = ScriptedModel(OBSERVED)
    result = await run_job(observe_job("t"), CONFIG, model, COUNTER, hooks(before_observation=[REDACTION_HOOK]))
    sent = sent_text(model)
    assert result.ok and "sk-abcdefghijklmnopqrstu" not in sent and "jane@example.com" not in sent
    assert "[REDACTED:api-key]" in sent and "[REDACTED:email]" in sent


async def test_om_redact_puts_the_redaction_hook_first_once() -> None:
    loaded = load_hooks(Settings(redact=True, hooks={"before_observation": [f"{FIXTURES}:drop_or_fail"]}))
    assert [h.path for h in loaded.slots["before_observation"]] == [REDACTION_HOOK, f"{FIXTURES}:drop_or_fail"]
    again = load_hooks(Settings(redact=True, hooks={"before_observation": [REDACTION_HOOK]}))
    assert [h.path for h in again.slots["before_observation"]] == [REDACTION_HOOK]


async def test_an_empty_message_list_skips_the_observer_but_the_cycle_succeeds() -> None:
    model = ScriptedModel(OBSERVED)
    result = await run_job(observe_job("drop-1"), CONFIG, model, COUNTER,
                           hooks(before_observation=[f"{FIXTURES}:drop_or_fail"]))
    assert result.ok and result.observations == "" and model.calls == []


async def test_a_raising_hook_fails_the_cycle_without_echoing_its_data() -> None:
    model = ScriptedModel(OBSERVED)
    result = await run_job(observe_job("fail-1"), CONFIG, model, COUNTER,
                           hooks(before_observation=[f"{FIXTURES}:drop_or_fail"]))
    assert not result.ok and model.calls == []
    assert result.error == f"before_observation hook {FIXTURES}:drop_or_fail failed: RuntimeError"


async def test_none_passes_through_and_after_observation_replaces_the_text() -> None:
    model = ScriptedModel(OBSERVED)
    result = await run_job(observe_job("t"), CONFIG, model, COUNTER,
                           hooks(before_observation=[f"{FIXTURES}:drop_or_fail"],
                                 after_observation=[f"{FIXTURES}:mark_observations"]))
    assert result.ok and "sk-abcdefghijklmnopqrstu" in sent_text(model)
    assert result.observations.endswith(AFTER_MARK) and "User stated a plan." in result.observations


async def test_reflection_hooks_rewrite_the_input_and_a_wrong_type_fails_the_cycle() -> None:
    model = ScriptedModel(REFLECTED)
    result = await run_job(reflect_job(), CONFIG, model, COUNTER,
                           hooks(before_reflection=[f"{FIXTURES}:shout_reflection_input"]))
    assert result.ok and "A LONG NOTE" in sent_text(model)
    failed = await run_job(reflect_job(), CONFIG, ScriptedModel(REFLECTED), COUNTER,
                           hooks(after_reflection=[f"{FIXTURES}:not_a_string"]))
    assert not failed.ok and failed.kind == "reflect-result" and "returned int, not str" in (failed.error or "")


@pytest.mark.parametrize("path", ["tests.hook_fixtures", "tests.hook_fixtures:missing", "no.such.module:f"])
def test_a_bad_hook_path_fails_at_load_not_in_a_cycle(path: str) -> None:
    with pytest.raises((ValueError, ImportError)):
        hooks(after_observation=[path])
