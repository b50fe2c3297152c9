"""Message accounting (spec §9.1, scenarios 51-52) and the public get_counter API."""

from __future__ import annotations

import copy

import pytest

from processors.tokens import COUNTER_NAMES, get_counter
from processors.tokens.counter import MessageTokenCounter
from processors.tokens.estimate_cache import EstimateCache
from processors.tokens.tokenx import estimate_token_count
from schemas.messages import ChatMessage

ROLE_USER = 1  # tokenx("user")
ROLE_ASSISTANT = 2  # tokenx("assistant") = ceil(9 / 6)


def message(*parts: dict, role: str = "user") -> ChatMessage:
    return ChatMessage.model_validate(
        {"id": "m1", "threadId": "t1", "role": role, "createdAt": 1, "parts": list(parts)}
    )


def fresh(model: str | None = "openai/gpt-4o") -> MessageTokenCounter:
    from processors.tokens.attachments import ModelContext

    return MessageTokenCounter("tokenx", estimate_token_count, ModelContext.parse(model), EstimateCache(64))


def test_text_message_formula() -> None:
    text = "Hello there, how are you doing today?"
    assert fresh().count_message(message({"type": "text", "text": text})) == round(
        ROLE_USER + 3.8 + estimate_token_count(text)
    )


def test_conversation_overhead_and_empty_list() -> None:
    counter = fresh()
    one = message({"type": "text", "text": "hi"})
    assert counter.count_messages([]) == 0
    assert counter.count_messages([one, one]) == 24 + 2 * counter.count_message(one)


def test_data_and_reasoning_parts_cost_nothing() -> None:
    counter = fresh()
    bare = counter.count_message(message({"type": "text", "text": "x"}))
    noisy = message({"type": "text", "text": "x"}, {"type": "reasoning", "text": "long thoughts " * 100},
                    {"type": "data-om-status", "data": {"big": "payload " * 100}})
    assert counter.count_message(noisy) == bare
    assert counter.estimate_cache.misses == 1  # only the text was estimated (and cached)


def test_other_parts_cost_their_json() -> None:
    # Mastra counts a step-start part as JSON: {"type":"step-start"} -> 7 tokens
    assert fresh().count_message(message({"type": "step-start"})) == round(ROLE_USER + 3.8 + 7)


def test_scenario_51_client_estimate_used_verbatim() -> None:
    part = {"type": "file", "data": "https://x.test/big.pdf", "mimeType": "application/pdf",
            "providerMetadata": {"mastra": {"tokenEstimate": {"v": 0, "source": "client", "key": "client",
                                                               "tokens": 100000}}}}
    assert fresh().count_message(message(part)) == round(ROLE_USER + 3.8 + 100000)


def test_client_estimate_in_a_keyed_map_and_minimal_form() -> None:
    slot = {"text:abc": {"v": 7, "source": "v7:tokenx", "key": "text:abc", "tokens": 3},
            "client": {"source": "client", "tokens": 4200}}
    part = {"type": "image", "image": "https://x.test/a.png", "providerMetadata": {"mastra": {"tokenEstimate": slot}}}
    assert fresh().count_message(message(part)) == round(ROLE_USER + 3.8 + 4200)


@pytest.mark.parametrize("bad", [{"source": "client", "tokens": -1}, {"source": "client", "tokens": float("inf")},
                                 {"source": "client", "tokens": True}, {"source": "v7:tokenx", "tokens": 5}])
def test_invalid_client_estimates_are_ignored(bad: dict) -> None:
    part = {"type": "image", "image": "https://x.test/a.png", "providerMetadata": {"mastra": {"tokenEstimate": bad}}}
    assert fresh().count_message(message(part)) == round(ROLE_USER + 3.8 + 85)


def test_counting_never_mutates_the_message() -> None:
    msg = message({"type": "text", "text": "hello"}, {"type": "image", "image": "data:image/png;base64," + "A" * 400},
                  {"type": "tool-invocation", "toolCallId": "c1", "toolName": "search", "state": "result",
                   "args": {"q": "x"}, "result": {"encryptedContent": "z" * 300}})
    before = copy.deepcopy(msg.model_dump())
    counter = fresh()
    counter.count_message(msg)
    counter.count_message(msg)
    assert msg.model_dump() == before


def test_scenario_52_estimates_are_cached_by_content() -> None:
    counter = fresh()
    first = counter.count_message(message({"type": "text", "text": "same words here"}))
    again = counter.count_message(message({"type": "text", "text": "same words here"}))
    assert first == again
    assert (counter.estimate_cache.misses, counter.estimate_cache.hits) == (1, 1)


def test_cache_is_bounded_lru() -> None:
    cache = EstimateCache(max_entries=2)
    calls = []
    for payload in ("a", "b", "a", "c", "b"):
        cache.get_or_compute("text", payload, lambda p=payload: calls.append(p) or 1)
    assert len(cache) == 2
    assert calls == ["a", "b", "c", "b"]  # "a" was refreshed before "c" evicted the oldest ("b")


def test_cache_keys_by_kind() -> None:
    cache = EstimateCache()
    assert cache.get_or_compute("text", "x", lambda: 1) == 1
    assert cache.get_or_compute("tool-call-name", "x", lambda: 2) == 2


class TestToolInvocations:
    def invocation(self, **fields: object) -> ChatMessage:
        return message({"type": "tool-invocation", "toolCallId": "c1", "toolName": "weather", **fields},
                       role="assistant")

    def test_call_with_json_args_gets_the_json_credit(self) -> None:
        args_tokens = estimate_token_count('{"city":"Paris"}')
        expected = round(ROLE_ASSISTANT + 3.8 - 12 + estimate_token_count("weather") + args_tokens)
        assert fresh().count_message(self.invocation(state="call", args={"city": "Paris"})) == expected

    def test_string_args_keep_the_overhead(self) -> None:
        expected = round(ROLE_ASSISTANT + 3.8 + 2 + estimate_token_count("city=Paris"))
        assert fresh().count_message(self.invocation(state="call", args="city=Paris")) == expected

    def test_result_counts_an_extra_message(self) -> None:
        result = {"temp": 21, "unit": "C"}
        pretty = '{\n  "temp": 21,\n  "unit": "C"\n}'
        expected = round(ROLE_ASSISTANT + 2 * 3.8 + 2 + estimate_token_count(pretty) - 12)
        assert fresh().count_message(self.invocation(state="result", result=result)) == expected

    def test_model_output_is_preferred(self) -> None:
        msg = self.invocation(state="result", result="x " * 5000,
                              providerMetadata={"mastra": {"modelOutput": "short summary"}})
        expected = round(ROLE_ASSISTANT + 2 * 3.8 + 2 + estimate_token_count("short summary"))
        assert fresh().count_message(msg) == expected

    def test_encrypted_content_is_stripped(self) -> None:
        blob = "q" * 10_000
        msg = self.invocation(state="result", result={"encryptedContent": blob})
        pretty = '{\n  "encryptedContent": "[stripped encryptedContent: 10000 characters]"\n}'
        expected = round(ROLE_ASSISTANT + 2 * 3.8 + 2 + estimate_token_count(pretty) - 12)
        assert fresh().count_message(msg) == expected

    def test_short_encrypted_content_is_kept(self) -> None:
        msg = self.invocation(state="result", result={"encryptedContent": "abc"})
        pretty = '{\n  "encryptedContent": "abc"\n}'
        assert fresh().count_message(msg) == round(ROLE_ASSISTANT + 2 * 3.8 + 2 + estimate_token_count(pretty) - 12)

    @pytest.mark.parametrize(
        ("fields", "text"),
        [({"state": "result"}, "[empty result]"), ({"state": "result", "isError": True}, "Tool execution failed"),
         ({"state": "result", "result": "  ", "isError": True, "errorText": "boom"}, "boom"),
         ({"state": "output-error", "errorText": "timeout"}, "timeout"),
         ({"state": "output-denied"}, "Tool call was not approved by the user"),
         ({"state": "output-denied", "approvalReason": "no thanks"}, "no thanks")],
    )
    def test_fallback_texts(self, fields: dict, text: str) -> None:
        expected = round(ROLE_ASSISTANT + 2 * 3.8 + 2 + estimate_token_count(text))
        assert fresh().count_message(self.invocation(**fields)) == expected

    def test_approval_responded(self) -> None:
        msg = self.invocation(state="approval-responded", approvalReason="go ahead")
        assert fresh().count_message(msg) == round(ROLE_ASSISTANT + 2 * 3.8 + 2 + estimate_token_count("go ahead"))

    def test_multimodal_result_counts_images_as_images(self) -> None:
        result = {"type": "content", "value": [{"type": "text", "text": "Here is the chart"},
                                               {"type": "image-data", "data": "A" * 400, "mediaType": "image/png"}]}
        expected = round(ROLE_ASSISTANT + 2 * 3.8 + 2 + estimate_token_count("Here is the chart") + 85 - 12)
        assert fresh().count_message(self.invocation(state="result", result=result)) == expected


def test_rounding_is_half_up_like_javascript() -> None:
    from processors.tokens.js_compat import js_round

    assert (js_round(2.5), js_round(3.5), js_round(-2.5), js_round(-8.2)) == (3, 4, -2, -8)


def test_get_counter_shares_instances_and_validates_names() -> None:
    assert get_counter() is get_counter("tokenx", None)
    assert get_counter("tokenx", "openai/gpt-4o") is not get_counter("tokenx", "anthropic/claude")
    assert COUNTER_NAMES == {"tokenx", "o200k_base", "cl100k_base"}
    with pytest.raises(ValueError, match="unknown token counter"):
        get_counter("gpt2")


def test_model_context_selects_image_rules() -> None:
    msg = message({"type": "image", "image": "https://x.test/a.png"})
    assert get_counter("tokenx", "openai/gpt-4o").count_message(msg) == round(ROLE_USER + 3.8 + 85)
    assert get_counter("tokenx", "anthropic/claude-sonnet-4").count_message(msg) == round(ROLE_USER + 3.8 + 1600)


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_bpe_counters_share_the_accounting(name: str) -> None:
    counter = get_counter(name)
    text = "Observational memory keeps the context window small."
    msg = message({"type": "text", "text": text}, {"type": "image", "image": "https://x.test/a.png"})
    assert counter.name == name
    assert counter.count_observations(text) == counter.count_string(text) > 0
    assert counter.count_message(msg) == round(counter.count_string("user") + 3.8 + counter.count_string(text) + 85)
    assert counter.count_messages([msg]) == 24 + counter.count_message(msg)


def test_paragraphs_are_added_only_for_a_counter_that_splits_on_whitespace() -> None:
    """A string counter that prices whitespace (as a BPE encoding may merge it) counts the joined text."""
    whole = MessageTokenCounter("chars", len, cache=EstimateCache(64))
    assert whole.count_paragraphs(["ab", "cd"]) == len("ab\n\ncd") == 6
    split = MessageTokenCounter("words", lambda text: len(text.split()), cache=EstimateCache(64),
                                splits_on_whitespace=True)
    assert split.count_paragraphs(["a b", "c"]) == 3
    assert get_counter("tokenx").count_paragraphs(["abcdefg", "x"]) == estimate_token_count("abcdefg\n\nx") == 3
