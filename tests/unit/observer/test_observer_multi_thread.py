from processors.observer.multi_thread import parse_multi_thread_answer
from processors.config import BUILTIN_EXTRACTORS
from processors.observer.runner import run_observer
from processors.observer.types import ObserverMode, ObserverRequest, ObserverSettings, PriorMetadata, ThreadInput
from processors.tokens import get_counter
from schemas.messages import ChatMessage
from streams.llm.client import LiteLLMClient
from tests.unit._om_fakes import ScriptedModel

COUNTER = get_counter()


def _thread(tid: str, text: str, at: int) -> ThreadInput:
    return ThreadInput(thread_id=tid, prior=PriorMetadata(current_task=f"task of {tid}"), messages=[
        ChatMessage(id=f"{tid}-1", thread_id=tid, role="user", created_at=at, parts=[
            {"type": "text", "text": text}, {"type": "image", "image": f"https://x.test/{tid}.png"}])])


def test_multi_thread_answer_parsed_per_thread_and_missing_threads_empty():
    answer = (
        '<observations>\n<thread id="a">\nDate: Dec 4, 2024\n* 🔴 (10:00) User stated A.\n'
        "<current-task>do A</current-task>\n</thread>\n"
        '<thread id="zzz">\n* 🔴 (10:00) stray\n</thread>\n</observations>'
    )
    results, warnings, degenerate = parse_multi_thread_answer(answer, ["a", "b"], list(BUILTIN_EXTRACTORS))
    assert not degenerate
    assert results["a"].observations == "Date: Dec 4, 2024\n* 🔴 (10:00) User stated A." and results["a"].current_task == "do A"
    assert results["b"].observations == ""
    assert any("unknown thread 'zzz'" in w for w in warnings) and any("thread(s) b" in w for w in warnings)


async def test_multi_thread_prompt_has_thread_sections_shared_attachment_numbers_and_priors():
    model = ScriptedModel('<observations>\n<thread id="a">\nDate: Dec 4, 2024\n* 🔴 (17:33) x\n</thread>\n</observations>')
    request = ObserverRequest(mode=ObserverMode.MULTI_THREAD, settings=ObserverSettings(model="openai/gpt-4o"),
                              threads=[_thread("a", "alpha", 1733333580000), _thread("b", "beta", 1733333640000)])
    outcome = await run_observer(request, model, COUNTER)
    system, task, history = (m["content"] for m in model.calls[0].messages)
    texts = "\n".join(p["text"] for p in history if p["type"] == "text")
    assert '<thread id="a">' in texts and '<thread id="b">' in texts
    assert "[Image #1: a.png]" in texts and "[Image #2: b.png]" in texts
    assert "- thread a\n  - prior current-task: task of a" in task and '<thread id="...">' in system
    assert set(outcome.threads) == {"a", "b"} and outcome.threads["a"].observations.endswith("* 🔴 (17:33) x")


async def test_multi_thread_with_the_deterministic_model():
    request = ObserverRequest(mode=ObserverMode.MULTI_THREAD, settings=ObserverSettings(model="om-deterministic/echo"),
                              threads=[_thread("a", "I adopted a cat named Miso", 1733333580000),
                                       _thread("b", "Book a table for two on Friday?", 1733333640000)])
    outcome = await run_observer(request, LiteLLMClient(), COUNTER)
    assert 'User stated: "I adopted a cat named Miso"' in outcome.threads["a"].observations
    assert 'User asked: "Book a table for two on Friday?"' in outcome.threads["b"].observations
    assert outcome.threads["b"].current_task == "Primary: Book a table for two on Friday?"
    assert outcome.warnings == []


async def test_a_multi_thread_answer_without_thread_sections_is_asked_again_then_fails():
    """Prose for several threads would observe every thread's messages into nothing."""
    prose = "Sure! Both users talked about their plans and it all sounds great."
    request = ObserverRequest(mode=ObserverMode.MULTI_THREAD, settings=ObserverSettings(model="openai/gpt-4o"),
                              threads=[_thread("a", "alpha", 1733333580000), _thread("b", "beta", 1733333640000)])
    model = ScriptedModel(prose, prose)
    outcome = await run_observer(request, model, COUNTER)
    assert len(model.calls) == 2 and outcome.error == "observer answer without a <thread> section on every try"
    good = '<observations>\n<thread id="a">\nDate: Dec 4, 2024\n* 🔴 (17:33) x\n</thread>\n</observations>'
    model = ScriptedModel(prose, good)
    outcome = await run_observer(request, model, COUNTER)
    assert len(model.calls) == 2 and outcome.error is None and outcome.threads["a"].observations.endswith("x")
