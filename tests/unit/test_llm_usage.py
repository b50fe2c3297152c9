"""Billed tokens from a model's reply (streams/llm/usage.py): input, output, cached and cache-written input, as
litellm reports them for OpenAI and Anthropic, through the client onto a job's result, and priced."""

from __future__ import annotations

from types import SimpleNamespace

import litellm
import pytest
from litellm.llms.anthropic.chat.transformation import AnthropicConfig

from processors.config import OMConfig
from processors.model_port import ModelCall
from processors.tokens import get_counter
from schemas.jobs import ObserveJob, ObserveResult, Usage, decode_result
from schemas.messages import ChatMessage, TextPart
from streams.costs import call_cost
from streams.llm.client import LiteLLMClient
from streams.llm.jobs import run_job
from streams.llm.usage import usage_of

ANSWER = "<observations>\nDate: Dec 4, 2024\n* 🔴 (17:33) User said hi.\n</observations>"


def openai_response(prompt: int, completion: int, cached: int | None, content: str = "ok") -> litellm.ModelResponse:
    """A chat completion as OpenAI sends it, read by litellm's own response model."""
    usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    if cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    return litellm.ModelResponse(id="r", object="chat.completion", created=1, model="gpt-4o-mini", usage=usage,
                                 choices=[{"index": 0, "finish_reason": "stop",
                                           "message": {"role": "assistant", "content": content}}])


def anthropic_usage(**raw: int) -> litellm.Usage:
    """Anthropic's usage block as litellm's Anthropic adapter turns it into a response's usage."""
    return AnthropicConfig().calculate_usage(raw, None)


def test_openai_cached_tokens_are_part_of_the_prompt_tokens() -> None:
    assert usage_of(openai_response(1_200, 30, 1_024)) == Usage(input_tokens=1_200, output_tokens=30,
                                                                cached_input_tokens=1_024)
    assert usage_of(openai_response(1_200, 30, None)) == Usage(input_tokens=1_200, output_tokens=30)


def test_anthropic_cache_reads_are_counted_as_cached_input_and_every_prompt_token_as_input() -> None:
    usage = anthropic_usage(input_tokens=50, output_tokens=20, cache_read_input_tokens=900,
                            cache_creation_input_tokens=100)
    assert usage_of(SimpleNamespace(usage=usage)) == Usage(input_tokens=1_050, output_tokens=20,
                                                           cached_input_tokens=900, cache_write_input_tokens=100)


def test_anthropic_cache_read_field_alone_and_anthropic_s_own_shape_read_alike() -> None:
    litellm_shape = SimpleNamespace(prompt_tokens=1_000, completion_tokens=5, prompt_tokens_details=None,
                                    cache_read_input_tokens=600)
    own_shape = SimpleNamespace(input_tokens=300, output_tokens=5, cache_read_input_tokens=600,
                                cache_creation_input_tokens=100)  # reads and writes outside input_tokens
    expected = Usage(input_tokens=1_000, output_tokens=5, cached_input_tokens=600)
    assert usage_of(SimpleNamespace(usage=litellm_shape)) == expected
    assert usage_of(SimpleNamespace(usage=own_shape)) == expected.model_copy(update={"cache_write_input_tokens": 100})


def test_a_reply_without_usage_or_with_odd_counts_reads_as_zero() -> None:
    assert usage_of(SimpleNamespace()) == Usage()
    odd = SimpleNamespace(prompt_tokens=None, completion_tokens="7", prompt_tokens_details=SimpleNamespace(
        cached_tokens=None), cache_read_input_tokens=True)
    assert usage_of(SimpleNamespace(usage=odd)) == Usage()


def test_cached_tokens_survive_the_wire_and_an_older_record_reads_them_as_zero() -> None:
    usage = Usage(input_tokens=10, output_tokens=2, cached_input_tokens=4)
    assert (usage + usage).cached_input_tokens == 8
    assert Usage.model_validate_json(usage.to_bytes()) == usage
    assert b"cached" not in Usage(input_tokens=10).to_bytes()  # 0 stays off the wire, as before the field
    old = (b'{"kind":"observe-result","cycle_id":"c","key":"thread:t","generation":0,"ok":true,"mode":"sync",'
           b'"started_at":1,"completed_at":2,"usage":{"input_tokens":10,"output_tokens":2}}')
    assert decode_result(old).usage == Usage(input_tokens=10, output_tokens=2, cached_input_tokens=0)


def test_cached_input_is_priced_at_the_cache_read_price() -> None:
    prices = litellm.model_cost["gpt-4o-mini"]
    assert prices["cache_read_input_token_cost"] < prices["input_cost_per_token"]
    cost = call_cost("openai/gpt-4o-mini", 1_000, 100, cached_input_tokens=400)
    assert cost == pytest.approx(600 * prices["input_cost_per_token"] + 400 * prices["cache_read_input_token_cost"]
                                 + 100 * prices["output_cost_per_token"])
    assert cost < call_cost("openai/gpt-4o-mini", 1_000, 100)


async def test_the_client_and_the_job_carry_cached_tokens_onto_the_result() -> None:
    async def completion(**kwargs):
        return openai_response(2_000, 40, 1_536, content=ANSWER)

    client = LiteLLMClient(completion=completion)
    reply = await client.complete(ModelCall(role="observer", model="openai/gpt-4o-mini",
                                            messages=[{"role": "user", "content": "hi"}]))
    assert reply.usage == Usage(input_tokens=2_000, output_tokens=40, cached_input_tokens=1_536)

    message = ChatMessage(id="m1", thread_id="t", role="user", created_at=1733333580000, parts=[TextPart(text="hi")])
    job = ObserveJob(cycle_id="c", key="thread:t", thread_id="t", resource_id="r", record_id="rec", generation=0,
                     issued_at=0, mode="sync", messages=[message], tokens_to_observe=5)
    result = await run_job(job, OMConfig.model_validate({"model": "openai/gpt-4o-mini"}), client, get_counter())
    assert isinstance(result, ObserveResult) and result.ok, result.error
    assert result.usage.cached_input_tokens == 1_536
    assert decode_result(result.to_bytes()).usage.cached_input_tokens == 1_536


def test_anthropic_cache_writes_are_kept_apart_and_priced_at_the_cache_creation_price() -> None:
    usage = usage_of(SimpleNamespace(usage=anthropic_usage(input_tokens=50, output_tokens=20, cache_read_input_tokens=0,
                                                           cache_creation_input_tokens=2_000)))
    assert usage == Usage(input_tokens=2_050, output_tokens=20, cache_write_input_tokens=2_000)
    prices = litellm.model_cost["claude-sonnet-4-5-20250929"]
    assert prices["cache_creation_input_token_cost"] == pytest.approx(1.25 * prices["input_cost_per_token"])
    model = "anthropic/claude-sonnet-4-5-20250929"
    cost = call_cost(model, usage.input_tokens, usage.output_tokens,
                     cache_write_input_tokens=usage.cache_write_input_tokens)
    assert cost == pytest.approx(50 * prices["input_cost_per_token"] + 2_000 * prices["cache_creation_input_token_cost"]
                                 + 20 * prices["output_cost_per_token"])
    assert cost > call_cost(model, usage.input_tokens, usage.output_tokens), "the surcharge is in the ledger"
    assert (usage + usage).cache_write_input_tokens == 4_000
    assert b"cache_write" not in Usage(input_tokens=10).to_bytes()  # 0 stays off the wire, as before the field
