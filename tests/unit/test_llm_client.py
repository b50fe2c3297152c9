import asyncio

import pytest

from processors.model_port import ModelCall, ModelCallError
from processors.observer.model_choice import resolve_model
from processors.config import ModelByInputTokens, OMConfig
from processors.tokens import get_counter
from schemas.jobs import ObserveJob
from schemas.messages import ChatMessage, TextPart
from streams.llm.client import LiteLLMClient
from streams.llm.deterministic.provider import FAULTS
from streams.llm.jobs import run_job
from streams.llm.models import provider_kwargs, to_litellm_model
from streams.llm.retry import RetryPolicy
from tests.unit._om_fakes import ScriptedModel

import litellm

USER = [{"role": "user", "content": "hello"}]


async def _no_sleep(_):
    return None


@pytest.fixture(autouse=True)
def _reset_faults():
    FAULTS.reset()
    yield
    FAULTS.reset()


@pytest.mark.parametrize("mastra, expected", [
    ("google/gemini-2.5-flash", "gemini/gemini-2.5-flash"),
    ("default", "gemini/gemini-2.5-flash"),
    ("openai.responses/gpt-5", "openai/gpt-5"),
    ("anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"),
    ("togetherai/meta-llama/Llama-3-70b", "together_ai/meta-llama/Llama-3-70b"),
    ("gpt-4o", "gpt-4o"),
])
def test_mastra_model_strings_map_to_litellm(mastra, expected):
    assert to_litellm_model(mastra) == expected


def test_temperature_sent_exactly_as_the_call_carries_it():
    """The role defaults are decided in the config (roles.py); the client adds none of its own."""
    client = LiteLLMClient()
    unset = client.request_kwargs(ModelCall(role="observer", model="google/gemini-2.5-flash", messages=USER))
    zero = client.request_kwargs(ModelCall(role="reflector", model="openai/gpt-4o", messages=USER, temperature=0.0))
    assert "temperature" not in unset and zero["temperature"] == 0.0


def test_max_output_capped_at_model_limit_and_thinking_budget_mapped():
    kwargs = LiteLLMClient().request_kwargs(ModelCall(
        role="observer", model="google/gemini-2.5-flash", messages=USER, max_output_tokens=100_000,
        provider_options={"google": {"thinkingConfig": {"thinkingBudget": 215}}}))
    assert kwargs["max_tokens"] == 65_536
    assert kwargs["thinking"] == {"type": "enabled", "budget_tokens": 215}
    assert provider_kwargs("openai/gpt-4o", {"google": {"thinkingConfig": {"thinkingBudget": 1}}}) == {}


def test_model_by_input_tokens_tiers_resolve():
    tiers = ModelByInputTokens(up_to={1000: "openai/gpt-4o-mini", 100_000: "google/gemini-2.5-pro"})
    assert resolve_model(tiers, 999) == "openai/gpt-4o-mini"
    assert resolve_model(tiers, 5000) == "google/gemini-2.5-pro"
    with pytest.raises(ValueError, match="exceeds the largest"):
        resolve_model(tiers, 200_000)


async def test_mock_response_reports_usage_and_one_attempt():
    client = LiteLLMClient(extra={"mock_response": "<observations>\n</observations>"})
    reply = await client.complete(ModelCall(role="observer", model="openai/gpt-4o", messages=USER))
    assert reply.text == "<observations>\n</observations>" and reply.attempts == 1
    assert reply.usage.input_tokens > 0 and reply.usage.output_tokens > 0


async def test_rate_limit_mock_is_retried_to_the_bound_then_reported_transient():
    slept: list[float] = []

    async def sleep(seconds):
        slept.append(seconds)

    error = litellm.RateLimitError("slow down", "openai", "gpt-4o")
    client = LiteLLMClient(RetryPolicy(max_retries=3, jitter=0), sleep=sleep, extra={"mock_response": error})
    with pytest.raises(ModelCallError) as failed:
        await client.complete(ModelCall(role="observer", model="openai/gpt-4o", messages=USER))
    assert failed.value.transient and failed.value.attempts == 4 and slept == [1.0, 2.0, 4.0]


async def test_deterministic_provider_fails_twice_with_429_then_answers():
    client = LiteLLMClient(RetryPolicy(max_retries=5), sleep=_no_sleep)
    reply = await client.complete(ModelCall(
        role="observer", model="om-deterministic/echo?fail=429&times=2", messages=[
            {"role": "system", "content": "x"}, {"role": "user", "content": "task"},
            {"role": "user", "content": "## New Message History to Observe\nDec 4 2024:\nUser (5:33 PM): hello there"}]))
    assert reply.attempts == 3
    assert '* 🔴 (17:33) User stated: "hello there"' in reply.text


async def test_the_offline_model_answers_off_the_event_loop(monkeypatch):
    """Its string rules take milliseconds on a long prompt: they run in a thread, as a provider's answer
    comes over a socket, so the worker's loop (fold, sink) goes on meanwhile. Here the answer cannot
    finish until a coroutine on the loop has run: on the loop itself it would never finish."""
    import threading
    from streams.llm.deterministic import offline

    answering, loop_ran = threading.Event(), threading.Event()
    real_answer = offline.answer

    def answer_once_the_loop_runs(*args, **kwargs):
        answering.set()
        assert loop_ran.wait(timeout=5), "the loop did not run while the offline model answered"
        return real_answer(*args, **kwargs)

    monkeypatch.setattr(offline, "answer", answer_once_the_loop_runs)

    async def mark() -> None:  # runs on the loop once the answer has begun
        while not answering.is_set():
            await asyncio.sleep(0.001)
        loop_ran.set()

    client = LiteLLMClient(RetryPolicy(max_retries=0), sleep=_no_sleep)
    marker = asyncio.ensure_future(mark())
    reply = await client.complete(ModelCall(role="observer", model="om-deterministic/echo", messages=[
        {"role": "system", "content": "x"}, {"role": "user", "content": "task"},
        {"role": "user", "content": "## New Message History to Observe\nDec 4 2024:\nUser (5:33 PM): hello there"}]))
    await marker
    assert '* 🔴 (17:33) User stated: "hello there"' in reply.text and reply.attempts == 1


@pytest.mark.parametrize("fail, transient, attempts", [("500", True, 3), ("503", True, 3), ("timeout", True, 3), ("400", False, 1)])
async def test_deterministic_faults_classified(fail, transient, attempts):
    client = LiteLLMClient(RetryPolicy(max_retries=2), sleep=_no_sleep)
    with pytest.raises(ModelCallError) as failed:
        await client.complete(ModelCall(role="observer", model=f"om-deterministic/observer?fail={fail}", messages=USER))
    assert (failed.value.transient, failed.value.attempts) == (transient, attempts)


@pytest.mark.parametrize(("config", "temperature", "max_tokens"), [
    ({}, 0.3, 65_536),                                   # OM's own default model: 100 000, capped at its limit
    ({"model": "google/gemini-2.5-flash"}, 0.3, 65_536),  # named explicitly: Mastra sets no budget; the
    ({"model": "openai/qwen-local"}, None, 8_192),        # client caps at the model's limit, else the default
])                                                       # (issue 24: an uncapped local model loops on)
async def test_what_the_worker_sends_is_what_the_role_defaults_decided(config, temperature, max_tokens):
    message = ChatMessage(id="m1", thread_id="t", role="user", created_at=1733333580000, parts=[TextPart(text="hi")])
    job = ObserveJob(cycle_id="c", key="thread:t", thread_id="t", resource_id="r", record_id="rec", generation=0,
                     issued_at=0, mode="sync", messages=[message], tokens_to_observe=5)
    model = ScriptedModel("<observations>\n* 🔴 (17:33) User said hi.\n</observations>")
    await run_job(job, OMConfig.model_validate(config), model, get_counter())
    kwargs = LiteLLMClient().request_kwargs(model.calls[0])
    assert kwargs.get("temperature") == temperature and kwargs.get("max_tokens") == max_tokens


def test_the_worker_app_starts_without_importing_litellm():
    """litellm's import is seconds of a restart; only the first model call may pay it."""
    import subprocess
    import sys

    code = "import sys, streams.worker, streams.app; print('litellm' in sys.modules)"
    from streams.settings import PROJECT_ROOT

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=PROJECT_ROOT)
    assert out.stdout.strip() == "False"


async def test_concurrent_first_calls_share_one_litellm_import(monkeypatch):
    import asyncio

    from streams.llm import client as client_module

    loads: list[int] = []
    real = client_module._litellm_completion

    def counted():
        loads.append(1)
        return real()

    monkeypatch.setattr(client_module, "_litellm_completion", counted)
    client = LiteLLMClient(extra={"mock_response": "ok"})
    replies = await asyncio.gather(*(client.complete(ModelCall(role="observer", model="openai/gpt-4o",
                                                               messages=USER)) for _ in range(4)))
    await client.complete(ModelCall(role="observer", model="openai/gpt-4o", messages=USER))
    assert [r.text for r in replies] == ["ok"] * 4 and loads == [1]


async def test_load_keeps_a_given_completion_and_imports_once_for_many_callers(monkeypatch) -> None:
    """The llm role calls ``load`` as it starts (streams/llm_agent.py): a client given its completion keeps
    it, and callers waiting together share one import."""
    async def given(**_):
        raise AssertionError("not called here")

    assert await LiteLLMClient(completion=given).load() is given
    imports = []
    monkeypatch.setattr("streams.llm.client._litellm_completion", lambda: imports.append(1) or given)
    client = LiteLLMClient()
    loaded = await asyncio.gather(client.load(), client.load(), client.load())
    assert loaded == [given] * 3 and imports == [1]


def test_an_offline_model_is_answered_without_importing_litellm():
    """A worker whose models are all offline never imports litellm (seconds of CPU at every start,
    ~2.6 ms of CPU per call): its calls and its start-up ``load`` go around it (in a fresh process:
    this one has imported litellm already)."""
    import subprocess
    import sys

    from streams.settings import PROJECT_ROOT

    code = """
import asyncio, sys
from processors.model_port import ModelCall
from streams.llm.client import LiteLLMClient

async def main():
    client = LiteLLMClient()
    assert await client.load([("observer", "om-deterministic/observer"), ("reflector", "om-deterministic/reflector")]) is None
    reply = await client.complete(ModelCall(role="observer", model="om-deterministic/observer",
                                            messages=[{"role": "user", "content": "**User (09:00)**: hi"}]))
    print(bool(reply.text), reply.usage.input_tokens > 0, "litellm" in sys.modules)

asyncio.run(main())
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=PROJECT_ROOT).stdout.strip().splitlines()[-1]
    assert out == "True True False"


async def test_load_imports_litellm_only_for_a_providers_model(monkeypatch):
    """The llm role's start-up ``load`` imports litellm once when a configured model is a provider's,
    and calls no model (a provider's model is never called before a job asks)."""
    called: list[str] = []
    imports: list[int] = []

    async def completion(**kwargs):
        called.append(kwargs["model"])

    monkeypatch.setattr("streams.llm.client._litellm_completion", lambda: imports.append(1) or completion)
    assert await LiteLLMClient().load([("observer", "om-deterministic/observer?fail=429&times=1")]) is None
    assert imports == []
    assert await LiteLLMClient().load([("reflector", "om-deterministic/reflector"),
                                       ("observer", "openai/gpt-4o")]) is completion
    assert imports == [1] and called == []


async def test_offline_answers_are_the_same_through_litellm_and_around_it():
    """``litellm.acompletion(model="om-deterministic/…")`` (the provider registered with litellm for its
    own callers) answers what the workers' client gets in-process, with the same usage."""
    import litellm

    from streams.llm.deterministic.provider import register

    register()
    messages = [{"role": "system", "content": "x"}, {"role": "user", "content": "task"},
                {"role": "user", "content": "## New Message History to Observe\nDec 4 2024:\nUser (5:33 PM): hello there"}]
    through = await litellm.acompletion(model="om-deterministic/echo", messages=messages)
    around = await LiteLLMClient().complete(ModelCall(role="observer", model="om-deterministic/echo",
                                                      messages=messages))
    assert around.text == through.choices[0].message.content and "hello there" in around.text
    assert (around.usage.input_tokens, around.usage.output_tokens) == (through.usage.prompt_tokens,
                                                                      through.usage.completion_tokens)
    assert around.finish_reason == "stop"


