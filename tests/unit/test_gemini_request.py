"""What litellm builds for Gemini from an Observer call, offline (issue 17; processors/observer/README.md).

Mastra 1.31 (the AI SDK's Google provider) sends the system prompt as ``systemInstruction`` and the
task and the history as two ``user`` contents. litellm merges consecutive user messages into one
content; this test pins what survives the merge, so a litellm upgrade that changes it is noticed.
"""

from __future__ import annotations

from processors.config import OMConfig
from processors.tokens import get_counter
from schemas.jobs import ObserveJob
from schemas.messages import ChatMessage, TextPart
from streams.llm.client import LiteLLMClient
from streams.llm.jobs import run_job
from tests.unit._om_fakes import ScriptedModel

from litellm.llms.gemini.chat.transformation import GoogleAIStudioGeminiConfig  # noqa: E402
from litellm.llms.vertex_ai.gemini.transformation import transform_request_body  # noqa: E402


async def _observer_call():
    message = ChatMessage(id="m1", thread_id="t", role="user", created_at=1733333580000,
                          parts=[TextPart(text="I moved to Ghent last week")])
    job = ObserveJob(cycle_id="c", key="thread:t", thread_id="t", resource_id="r", record_id="rec", generation=0,
                     issued_at=0, mode="sync", messages=[message], tokens_to_observe=8)
    model = ScriptedModel("<observations>\n* 🔴 (17:33) User moved to Ghent.\n</observations>")
    await run_job(job, OMConfig(), model, get_counter())
    return model.calls[0]


async def test_gemini_gets_one_user_turn_holding_task_and_history_as_separate_parts_in_order():
    call = await _observer_call()
    kwargs = LiteLLMClient().request_kwargs(call)
    params = {k: kwargs[k] for k in ("temperature", "max_tokens", "thinking")}
    optional = GoogleAIStudioGeminiConfig().map_openai_params(
        non_default_params=params, optional_params={}, model="gemini-2.5-flash", drop_params=True)
    body = transform_request_body(messages=[dict(m) for m in call.messages], model="gemini-2.5-flash",
                                  optional_params=optional, custom_llm_provider="gemini", litellm_params={},
                                  cached_content=None)
    system, task, history = (m["content"] for m in call.messages)
    assert body["system_instruction"]["parts"] == [{"text": system}]
    assert [c["role"] for c in body["contents"]] == ["user"]  # Mastra: two user contents
    texts = [p["text"] for p in body["contents"][0]["parts"]]
    assert texts == [task, *(p["text"] for p in history)]  # nothing joined, dropped or reordered
    assert body["generationConfig"]["temperature"] == 0.3
    assert body["generationConfig"]["max_output_tokens"] == 65_536  # Mastra asks 100 000
    assert body["generationConfig"]["thinkingConfig"] == {"includeThoughts": True, "thinkingBudget": 215}
