"""partIndex chunking and fallback, the instructions text, request parsing and observation groups."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from processors.recall import RecallError, RecallRequest, embedding_chunks, needs_next_message, parse_observation_groups, part_answer, recall_instructions
from processors.tokens import get_counter
from schemas.messages import ChatMessage, DataPart, TextPart, ToolInvocationPart

COUNTER = get_counter()


def _msg(mid: str, parts: list) -> ChatMessage:
    return ChatMessage(id=mid, thread_id="t", resource_id="r", role="assistant", created_at=5, parts=parts)


def test_part_index_reads_a_large_part_in_chunks_with_the_exact_next_call() -> None:
    big = "\n".join(f"line {i}: " + "x" * 40 for i in range(1_000))
    msg = _msg("m1", [TextPart(text="intro"), TextPart(text=big)])

    first = part_answer(msg, 1, None, COUNTER).to_dict()
    second = part_answer(msg, 1, first["nextCharOffset"], COUNTER).to_dict()

    assert first["truncated"] is True and first["charOffset"] == 0
    assert first["note"].endswith(f'recall cursor="m1" partIndex=1 detail="high" charOffset={first["nextCharOffset"]}')
    assert second["charOffset"] == first["nextCharOffset"]
    assert big.startswith(first["text"] + second["text"])


def test_part_index_of_a_tool_invocation_returns_its_result() -> None:
    tool = ToolInvocationPart(tool_call_id="c", tool_name="lookup", state="result", args={"q": 1}, result={"answer": 42})

    answer = part_answer(_msg("m1", [tool]), 0, None, COUNTER).to_dict()

    assert answer["type"] == "tool-result" and answer["text"].startswith("[Tool Result: lookup]\n")
    assert '"answer": 42' in answer["text"] and "nextCharOffset" not in answer


def test_part_index_past_the_end_falls_back_to_the_next_message() -> None:
    msg = _msg("m1", [TextPart(text="only part")])
    following = _msg("m2", [DataPart(type="data-x"), TextPart(text="next text")])

    assert needs_next_message(msg, 3, COUNTER) is True
    answer = part_answer(msg, 3, None, COUNTER, next_message=following).to_dict()

    assert (answer["messageId"], answer["partIndex"]) == ("m2", 1)
    assert answer["text"].startswith("Message m1 has no part 3; showing part 1 of the next message m2.")
    assert answer["text"].endswith("next text")


def test_part_index_that_does_not_exist_lists_the_indices() -> None:
    msg = _msg("m1", [TextPart(text="a"), DataPart(type="data-x"), TextPart(text="b")])

    with pytest.raises(RecallError, match="Its parts are: 0, 2"):
        part_answer(msg, 1, None, COUNTER)
    with pytest.raises(RecallError, match="nothing to show"):
        part_answer(_msg("m2", [DataPart(type="data-x")]), 0, None, COUNTER)


@pytest.mark.parametrize("scope", ["thread", "resource"])
@pytest.mark.parametrize("search", [True, False])
def test_instructions_depend_on_scope_and_search(scope: str, search: bool) -> None:
    text = recall_instructions(scope, None, search)  # type: ignore[arg-type]

    assert ('mode: "search"' in text) is search
    assert ("every conversation thread of this user" in text) is (scope == "resource")
    assert 'partIndex=2 detail="high" for more]' in text and "nextCharOffset" in text


def test_custom_instructions_are_appended_under_their_heading_never_replacing() -> None:
    base = recall_instructions("resource", None, True)
    custom = recall_instructions("resource", "  Prefer the newest thread.  ", True)

    assert custom == base + "\n\n### Additional recall guidance\nPrefer the newest thread."
    assert recall_instructions("resource", "   ", True) == base


def test_request_accepts_camel_case_parses_dates_and_refuses_out_of_bounds() -> None:
    request = RecallRequest.model_validate({"threadId": "current", "partIndex": 2, "charOffset": 10, "after": "2026-03-15"})

    assert (request.thread_id, request.part_index, request.char_offset) == ("current", 2, 10)
    assert request.after == 1_773_532_800_000
    assert RecallRequest(before="2026-03-10T01:00:00+01:00").before == 1_773_100_800_000
    for bad in ({"page": 51}, {"limit": 0}, {"limit": 51}, {"partIndex": -1}, {"mode": "vector"}, {"before": "soon"}, {"bogus": 1}):
        with pytest.raises(ValidationError):
            RecallRequest.model_validate(bad)


def test_observation_groups_are_parsed_and_chunked_at_lines() -> None:
    log = (
        'Date: Mar 1\n<observation-group id="aa11" range="m1:m9">\n* note one\n* note two\n</observation-group>\n'
        '<observation-group id="bb22" range="m10:m12" kind="reflection">\nreflected\n</observation-group>\n'
        '<observation-group range="x:y">\nno id\n</observation-group>\n'
    )

    groups = parse_observation_groups(log)

    assert [(g.id, g.range, g.content, g.kind) for g in groups] == [
        ("aa11", "m1:m9", "* note one\n* note two", None),
        ("bb22", "m10:m12", "reflected", "reflection"),
    ]
    chunks = embedding_chunks("\n".join(["a" * 30] * 10) + "\n" + "b" * 95, max_chars=40)
    assert all(len(c) <= 40 for c in chunks) and "".join(chunks).replace("\n", "") == "a" * 300 + "b" * 95
