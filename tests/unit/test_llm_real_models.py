"""What real models do, against a fake OpenAI-compatible server that misbehaves on purpose (issue 24):
answers cut off at the output cap, loops that vary only the time, slow answers, 500s — through the
real litellm client, so what is counted is what went over the wire."""

from __future__ import annotations

import logging
import time

import pytest

from processors.config import OMConfig
from processors.model_port import ModelCall, ModelCallError
from processors.simulate import Simulation
from processors.tokens import get_counter
from schemas.jobs import ObserveJob, ObserveResult, decode_result
from schemas.messages import ChatMessage, TextPart
from streams.llm.client import LiteLLMClient
from streams.llm.endpoints import Endpoint, Endpoints, endpoints_for
from streams.llm.jobs import run_job
from streams.llm.retry import RetryPolicy
from streams.settings import Settings
from tests.fake_openai import Behaviour, FakeOpenAI

COUNTER = get_counter()
KEY = "sk-test-never-logged-0123456789"
HELLO = [{"role": "user", "content": "hello"}]
GOOD = "<observations>\nDate: Mar 3, 2024\n* 🔴 (10:00) User booked a flight to Porto.\n</observations>"
CUT = "<observations>\nDate: Mar 3, 2024\n* 🔴 (10:00) User booked a fli"


def _loop() -> str:
    lines = []
    for minute in range(28):  # issue 24's loop: two sentences, 28 times, each with the next minute
        lines.append(f"* 🟡 (10:{minute:02d}) The assistant is still waiting for the user to confirm the booking.")
        lines.append(f"* 🟡 (10:{minute:02d}) The user has not replied yet to the question about the dates.")
    return "<observations>\nDate: Mar 3, 2024\n" + "\n".join(lines) + "\n</observations>"


def _client(server: FakeOpenAI, retries: int = 2, **kwargs) -> LiteLLMClient:
    return LiteLLMClient(RetryPolicy(max_retries=retries, base_delay=0, jitter=0),
                         endpoints=Endpoints(Endpoint(server.api_base, KEY)), **kwargs)


def _job() -> ObserveJob:
    message = ChatMessage(id="m1", thread_id="t", resource_id="r1", role="user", created_at=1709460000000,
                          parts=[TextPart(text="I booked a flight to Porto.")])
    return ObserveJob(cycle_id="c1", key="thread:t", thread_id="t", resource_id="r1", record_id="rec",
                      generation=0, issued_at=0, mode="sync", messages=[message], tokens_to_observe=20)


async def test_settings_base_url_and_key_reach_the_server_and_nothing_reaches_stdout_or_the_log(
        caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="streams.llm.calls")
    async with FakeOpenAI() as server:
        settings = Settings(model_api_base=server.api_base, model_api_key=KEY)
        client = LiteLLMClient.from_settings(settings, OMConfig(model="openai/qwen-local"))
        reply = await client.complete(ModelCall(role="observer", model="openai/qwen-local", messages=HELLO))
    assert reply.text == Behaviour().text and reply.finish_reason == "stop"
    assert [(s.model, s.authorization, s.max_tokens) for s in server.seen] == [
        ("qwen-local", f"Bearer {KEY}", settings.default_output_tokens)]
    names = [r.getMessage() for r in caplog.records]
    assert names == ["om.llm.call.start", "om.llm.call.done"]
    done = caplog.records[-1]
    assert (done.role, done.model, done.output_tokens, done.finish_reason) == ("observer", "openai/qwen-local", 20,
                                                                               "stop")
    logged = " ".join(str(r.__dict__) for r in caplog.records)
    assert KEY not in logged and "hello" not in logged and "Porto" not in logged
    assert KEY not in repr(settings) and KEY not in repr(client.endpoints)
    assert capfd.readouterr().out == ""


def test_a_role_endpoint_in_the_om_config_wins_and_extractor_calls_follow_their_model() -> None:
    config = OMConfig.from_mastra({
        "observation": {"model": "openai/small", "modelSettings": {"apiBase": "http://obs:1/v1",
                                                                   "apiKeyEnv": "OBSERVER_KEY"}},
        "reflection": {"model": "openai/big"},
    })
    endpoints = endpoints_for("http://shared:2/v1", "shared-key", config, environ={"OBSERVER_KEY": "obs-key"})
    client = LiteLLMClient(endpoints=endpoints)

    def sent(role: str, model: str) -> tuple[str, str]:
        kwargs = client.request_kwargs(ModelCall(role=role, model=model, messages=HELLO))  # type: ignore[arg-type]
        return kwargs["api_base"], kwargs["api_key"]

    assert sent("observer", "openai/small") == ("http://obs:1/v1", "obs-key")
    assert sent("extractor", "openai/small") == ("http://obs:1/v1", "obs-key")
    assert sent("reflector", "openai/big") == ("http://shared:2/v1", "shared-key")
    assert sent("extractor", "openai/big") == ("http://shared:2/v1", "shared-key")
    kwargs = client.request_kwargs(ModelCall(role="reflector", model="openai/big", messages=HELLO))
    assert kwargs["num_retries"] == 0 and kwargs["max_retries"] == 0 and kwargs["timeout"] == 600.0


async def test_an_answer_cut_off_at_the_cap_is_asked_again_with_the_cap_doubled() -> None:
    async with FakeOpenAI(Behaviour(text=CUT, finish_reason="length", output_tokens=4096), Behaviour(text=GOOD)) as server:
        reply = await _client(server, default_output_tokens=4096).complete(
            ModelCall(role="observer", model="openai/local", messages=HELLO))
    assert [s.max_tokens for s in server.seen] == [4096, 8192]
    assert reply.text == GOOD and reply.attempts == 2 and reply.usage.output_tokens == 4096 + 20


async def test_an_answer_cut_off_twice_fails_the_cycle_and_is_never_applied() -> None:
    async with FakeOpenAI(Behaviour(text=CUT, finish_reason="length")) as server:
        result = await run_job(_job(), OMConfig(model="openai/local"), _client(server), COUNTER)
    assert len(server.seen) == 2
    assert not result.ok and "cut off at the output cap" in (result.error or "") and result.observations == ""
    assert result.attempts == 2 and result.usage.output_tokens == 40


async def test_a_cut_off_answer_already_at_the_models_limit_fails_without_a_second_request() -> None:
    async with FakeOpenAI(Behaviour(text=CUT, finish_reason="length")) as server:
        with pytest.raises(ModelCallError, match="cut off") as failure:
            await _client(server).complete(ModelCall(role="observer", model="openai/gpt-4o", messages=HELLO,
                                                     max_output_tokens=16_384))
    assert len(server.seen) == 1 and not failure.value.transient


async def test_a_loop_that_varies_only_the_time_is_regenerated_once_then_fails() -> None:
    async with FakeOpenAI(Behaviour(text=_loop(), output_tokens=900)) as server:
        result = await run_job(_job(), OMConfig(model="openai/local"), _client(server), COUNTER)
    assert len(server.seen) == 2
    assert not result.ok and result.degenerate and result.observations == ""


async def test_a_caller_that_reads_only_the_start_gets_the_cut_off_answer_once() -> None:
    async with FakeOpenAI(Behaviour(text="Bristol, because she moved there in June and", finish_reason="length")) \
            as server:
        reply = await _client(server).complete(ModelCall(role="reader", model="openai/local", messages=HELLO,
                                                         max_output_tokens=8, cut_off_ok=True))
    assert len(server.seen) == 1 and reply.finish_reason == "length" and reply.text.startswith("Bristol")


PROSE = "I'm sorry, but I can't help with that. The user booked a flight to Porto, which sounds lovely!"


async def test_an_answer_without_notes_is_asked_again_once_then_fails_and_never_empties_the_window() -> None:
    """SmolLM2-135M answered the Observer in prose (no block, no list item): Mastra 1.31 applies that as
    an empty observation and the messages leave the context with nothing for them; here it fails."""
    async with FakeOpenAI(Behaviour(text=PROSE)) as server:
        result = await run_job(_job(), OMConfig(model="openai/local"), _client(server), COUNTER)
    assert len(server.seen) == 2 and not result.ok and not result.degenerate
    assert result.error == "observer answer without notes (no <observations> block, no list item) on every try"
    async with FakeOpenAI(Behaviour(text=PROSE), Behaviour(text=GOOD)) as server:
        result = await run_job(_job(), OMConfig(model="openai/local"), _client(server), COUNTER)
    assert len(server.seen) == 2 and result.ok and "flight to Porto" in result.observations and result.attempts == 2


async def test_an_explicit_empty_block_is_still_nothing_to_note() -> None:
    async with FakeOpenAI(Behaviour(text="<observations>\n</observations>")) as server:
        result = await run_job(_job(), OMConfig(model="openai/local"), _client(server), COUNTER)
    assert len(server.seen) == 1 and result.ok and result.observations == ""


async def test_a_slow_answer_times_out_per_attempt_and_is_retried_by_the_project_only(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="streams.llm.calls")
    async with FakeOpenAI(Behaviour(delay_s=30)) as server:
        client = _client(server, retries=1, timeouts={"observer": 0.5})
        started = time.monotonic()
        with pytest.raises(ModelCallError, match="timed out") as failure:
            await client.complete(ModelCall(role="observer", model="openai/local", messages=HELLO))
        elapsed = time.monotonic() - started
    assert len(server.seen) == 2 and failure.value.attempts == 2 and failure.value.transient
    assert elapsed < 5
    assert [r.getMessage() for r in caplog.records] == ["om.llm.call.start", "om.llm.call.retry", "om.llm.call.failed"]
    assert caplog.records[1].error == "TimeoutError" and caplog.records[-1].attempts == 2


@pytest.mark.parametrize("retries", [0, 3])
async def test_500s_cost_exactly_the_projects_retries(retries: int) -> None:
    async with FakeOpenAI(Behaviour(status=500)) as server:
        with pytest.raises(ModelCallError) as failure:
            await _client(server, retries=retries).complete(ModelCall(role="observer", model="openai/local",
                                                                     messages=HELLO))
    assert len(server.seen) == retries + 1 == failure.value.attempts and failure.value.transient


async def test_500s_then_an_answer_succeed_after_the_retries() -> None:
    async with FakeOpenAI(Behaviour(status=500), Behaviour(status=503), Behaviour(text=GOOD)) as server:
        reply = await _client(server, retries=3).complete(ModelCall(role="observer", model="openai/local",
                                                                   messages=HELLO))
    assert len(server.seen) == 3 and reply.attempts == 3 and reply.text == GOOD


async def test_parser_warnings_become_fields_of_the_result_and_the_observation_end_event() -> None:
    repaired = "Date: Mar 3, 2024\n* 🔴 (10:00) User booked a flight to Porto."  # no <observations> block
    async with FakeOpenAI(Behaviour(text=repaired)) as server:
        result = await run_job(_job(), OMConfig(model="openai/local"), _client(server), COUNTER)
    assert result.ok and result.observations.endswith("flight to Porto.")
    assert result.warnings == ["no <observations> block; kept list items only"]
    assert decode_result(result.to_bytes()) == result
    old = result.model_dump(mode="json", exclude={"warnings"})
    assert decode_result(ObserveResult(**old).to_bytes()).warnings is None  # an old payload still decodes

    config = OMConfig.from_mastra({"model": "openai/local", "observation": {"messageTokens": 30,
                                                                            "bufferTokens": False}})
    simulation = Simulation(config, lambda job: result.model_copy(update={"cycle_id": job.cycle_id}))
    events = []
    for i in range(6):
        message = ChatMessage(id=f"m{i}", thread_id="t", resource_id="r1", role="user", created_at=1709460000000 + i,
                              parts=[TextPart(text=f"Message {i} about the trip to Porto and the hotel booking.")])
        events += [e for entry in simulation.feed(message) for e in entry.events]
    ends = [e for e in events if e["type"] == "observation-end"]
    assert ends and ends[0]["warnings"] == ["no <observations> block; kept list items only"]
