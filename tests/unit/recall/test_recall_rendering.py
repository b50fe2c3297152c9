"""Rendering rules of recall: headers, part indices, low-detail cuts and hints, the 2 000-token budget."""

from __future__ import annotations

from processors.recall import RecallRequest, cursor_page, page_answer
from processors.recall.budget import chunk_text
from processors.recall.paging import Window
from processors.recall.parts import format_message_parts
from processors.recall.render import render_within_budget
from processors.tokens import get_counter
from processors.tokens.truncate import truncate_to_tokens
from schemas.messages import ChatMessage, DataPart, ImagePart, ReasoningPart, StepStartPart, TextPart, ToolInvocationPart

COUNTER = get_counter()
LONG = " ".join(f"word{i}" for i in range(2_000))


def _msg(mid: str, role: str, parts: list, at: int = 1_700_000_000_000) -> ChatMessage:
    return ChatMessage(id=mid, thread_id="t", resource_id="r", role=role, created_at=at, parts=parts)


def _answer(msgs: list[ChatMessage], **req: object) -> dict:
    request = RecallRequest(**req)
    spec = cursor_page(request.page, request.limit)
    return page_answer(request, spec, Window(msgs, False, False), COUNTER, cursor="c", empty_text="-").to_dict()


def test_header_and_part_lines_keep_the_stored_part_index() -> None:
    msg = _msg("m1", "assistant", [StepStartPart(), TextPart(text="hello"), DataPart(type="data-om-x"), ImagePart(image="x", filename="a.png")])

    text = _answer([msg])["messages"]

    assert text == "**assistant (2023-11-14 22:13:20Z)** [m1]:\n  [p1] hello\n  [p3] [Image: a.png]"


def test_low_detail_cuts_each_part_type_and_names_the_exact_follow_up_call() -> None:
    tool = ToolInvocationPart(tool_call_id="c1", tool_name="search", state="result", args={"q": LONG}, result=LONG)
    msg = _msg("m1", "assistant", [TextPart(text=LONG), tool, ReasoningPart(text=LONG)])

    parts = format_message_parts(msg, "low", COUNTER)

    assert [(p.part_index, p.type) for p in parts] == [(0, "text"), (1, "tool-call"), (1, "tool-result"), (2, "reasoning")]
    assert parts[1].text == "[Tool Call: search]"
    for part, limit in ((parts[0], 100), (parts[2], 20), (parts[3], 30)):
        hint = f' [recall cursor="m1" partIndex={part.part_index} detail="high" for more]'
        assert part.text.endswith(hint)
        assert COUNTER.count_string(part.text.removesuffix(hint)) <= limit


def test_spare_budget_re_expands_user_text_up_to_200_tokens_and_other_text_only_to_50() -> None:
    user = _msg("u", "user", [TextPart(text=LONG)], at=1)
    bot = _msg("a", "assistant", [TextPart(text=LONG)], at=2)

    text = _answer([user, bot])["messages"]
    user_block, bot_block = text.split("\n\n")
    user_line, bot_line = user_block.split("\n", 1)[1], bot_block.split("\n", 1)[1]

    low_bot = format_message_parts(bot, "low", COUNTER)[0].text

    assert 180 < COUNTER.count_string(user_line) <= 230  # user text grew from 100 to about 200 tokens
    assert bot_line == f"  [p0] {low_bot}"  # other text may grow only to 50 tokens: already past that
    assert 'cursor="u" partIndex=0' in user_line and 'cursor="a" partIndex=0' in bot_line


def test_a_page_over_budget_is_cut_hard_and_says_by_how_much() -> None:
    msgs = [_msg(f"m{i}", "user", [TextPart(text=f"{LONG[:400]} {i}") for _ in range(6)], at=i) for i in range(20)]

    answer = _answer(msgs)

    assert answer["truncated"] is True and answer["tokenOffset"] > 0
    assert COUNTER.count_string(answer["messages"]) <= 2_000


def test_high_detail_returns_one_part_and_how_to_continue() -> None:
    first = _msg("m1", "user", [TextPart(text="one"), TextPart(text="two")], at=1)
    second = _msg("m2", "assistant", [TextPart(text="three")], at=2)

    answer = _answer([first, second], detail="high")

    assert answer["count"] == 1 and answer["hasNextPage"] is True
    assert "[p0] one" in answer["messages"] and "two" not in answer["messages"].split("\n\n")[0]
    assert 'next part: partIndex=1 on cursor="m1"' in answer["messages"]
    assert 'next message: partIndex=0 on cursor="m2"' in answer["messages"]


def test_filters_that_match_nothing_say_so() -> None:
    msg = _msg("m1", "user", [TextPart(text="hi")])

    assert _answer([msg], part_type="tool-call")["messages"] == "(no message parts matched the current filters)"
    assert _answer([msg], tool_name="x")["messages"] == "(no message parts matched the current filters)"


def test_truncate_to_tokens_stays_within_its_budget_including_the_marker() -> None:
    cut = truncate_to_tokens(LONG, 50, COUNTER)

    assert COUNTER.count_string(cut) <= 50 and cut.endswith("tokens]") and LONG.startswith(cut.split("\n...")[0])


def test_chunks_concatenate_to_the_whole_text() -> None:
    text = "é🙂" * 3_000
    pieces, offset = [], 0
    while True:
        chunk = chunk_text(text, 500, offset, COUNTER)
        pieces.append(chunk.text)
        assert COUNTER.count_string(chunk.text) <= 500
        if chunk.next_char_offset is None:
            break
        offset = chunk.next_char_offset

    assert "".join(pieces) == text and len(pieces) > 2


def test_render_within_budget_leaves_uncut_parts_alone() -> None:
    parts = format_message_parts(_msg("m", "user", [TextPart(text="short")]), "low", COUNTER)

    rendered = render_within_budget(parts, {"m": 0}, COUNTER)

    assert (rendered.truncated, rendered.token_offset) == (False, 0) and rendered.text.endswith("[p0] short")
