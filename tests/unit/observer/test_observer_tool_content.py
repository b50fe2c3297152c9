"""Tool results of AI-SDK ``type: 'content'`` read and count as in Mastra 1.31 (spec §5.1, §9.1).

Source of the expectations: ``fixtures/tool_content_expected.json``, written by
``fixtures/tool_content_expected.gen.mjs``, which runs the real ``@mastra/memory`` 1.31.0 on each
case — its Observer history renderer (``buildObserverHistoryMessage`` of ``observer-agent.ts``:
``extractToolResultAttachments`` and ``mapToolResultBlockToAttachment``, then
``formatToolResultForObserver`` and ``truncateStringByTokens`` of ``tool-result-helpers.ts``) and
its ``TokenCounter.countMessage`` (``countMultimodalToolResultContent`` of ``token-counter.ts``).
So every history text below is Mastra's to the byte: the whole result as 2-space JSON, each
attachment block as ``{"type": …, "placeholder": "[Image #1: …]"}``, text items in place, and a
long result cut with ``\\n... [truncated ~N tokens]``.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from processors.observer.render import HistoryRenderer, RenderOptions
from processors.observer.tool_format import format_tool_result
from processors.tokens import get_counter
from schemas.messages import ChatMessage

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "tool_content_expected.json").read_text("utf-8"))
CASES = {case["name"]: case for case in FIXTURE["cases"]}


def _ours(message: dict[str, Any]) -> ChatMessage:
    """Mastra's stored message (``content.parts``, ``toolInvocation`` nested) in our flat shape."""
    parts = []
    for part in message["content"]["parts"]:
        if part["type"] == "tool-invocation":
            flat = {"type": "tool-invocation", **part["toolInvocation"]}
            if "providerMetadata" in part:
                flat["providerMetadata"] = part["providerMetadata"]
            parts.append(flat)
        else:
            parts.append(part)
    at = int(datetime.fromisoformat(message["createdAt"]).timestamp() * 1000)
    return ChatMessage.model_validate(
        {"id": message["id"], "threadId": message["threadId"], "role": message["role"], "createdAt": at, "parts": parts}
    )


def _render(case: dict[str, Any]) -> list[dict[str, Any]]:
    options = RenderOptions(tz="UTC", observe_attachments=["image/*", "application/pdf"])
    if "maxToolResultTokens" in case["options"]:
        options.tool_result_tokens = case["options"]["maxToolResultTokens"]
    renderer = HistoryRenderer(get_counter("tokenx"), options)
    return renderer.render_body([_ours(m) for m in case["messages"]])


def _expected_forward(part: dict[str, Any]) -> tuple[str, str]:
    """Mastra's forwarded AI-SDK part as the kind and source of our OpenAI-style content part."""
    source = part["image"] if part["type"] == "image" else part["data"]
    return ("image_url" if part["type"] == "image" else "file"), source


def _forward(part: dict[str, Any]) -> tuple[str, str]:
    if part["type"] == "image_url":
        return "image_url", part["image_url"]["url"]
    return "file", part["file"].get("file_data") or part["file"].get("file_id")


@pytest.mark.parametrize("name", sorted(CASES))
def test_history_text_is_mastras(name: str) -> None:
    case = CASES[name]
    ours = [p["text"] for p in _render(case) if p["type"] == "text"]
    assert ours == [p["text"] for p in case["history"] if p["type"] == "text"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_forwarded_attachments_follow_their_message_as_in_mastra(name: str) -> None:
    case = CASES[name]
    rendered = _render(case)
    ours = [("text", "") if p["type"] == "text" else _forward(p) for p in rendered]
    expected = [("text", "") if p["type"] == "text" else _expected_forward(p) for p in case["history"]]
    kinds_match = [kind for kind, _ in ours] == [kind for kind, _ in expected]
    assert kinds_match, (ours, expected)
    for (kind, source), (_, mastra_source) in zip(ours, expected):
        if kind == "text":
            continue
        if mastra_source.startswith(("data:", "http")):
            assert source == mastra_source
        else:  # a raw base64 image Mastra hands on untyped; ours is wrapped as a data URI
            assert source.endswith(f";base64,{mastra_source}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_message_counts_as_mastra_counted_it(name: str) -> None:
    case = CASES[name]
    counter = get_counter("tokenx")
    assert [counter.count_message(_ours(m)) for m in case["messages"]] == case["tokens"]


def test_the_cases_cover_every_attachment_block_kind_and_the_cut() -> None:
    kinds = {
        block.get("type")
        for case in FIXTURE["cases"]
        for message in case["messages"]
        for part in message["content"]["parts"]
        if part["type"] == "tool-invocation" and isinstance(part["toolInvocation"]["result"], dict)
        for block in part["toolInvocation"]["result"].get("value", [])
        if isinstance(block, dict)
    }
    assert {"image-data", "image-url", "media", "file-data", "file-url", "text"} <= kinds
    assert any("\n... [truncated ~" in p.get("text", "") for c in FIXTURE["cases"] for p in c["history"])


def test_a_missing_result_formats_as_nothing_and_a_short_one_as_itself() -> None:
    counter = get_counter("tokenx")
    assert format_tool_result(None, counter) == ""  # JSON.stringify(undefined) then the cut: ""
    assert format_tool_result("   ", counter) == "   "  # only the renderer turns blank into [empty result]
    assert format_tool_result({"ok": True}, counter) == '{\n  "ok": true\n}'
