"""Spec §10.2 scenarios 56–59 for the recall tool's pure core."""

from __future__ import annotations

from processors.recall import (
    SEARCH_NOT_CONFIGURED,
    RecallRequest,
    ThreadInfo,
    current_thread_answer,
    cursor_page,
    notice_answer,
    page_answer,
    parse_range,
    window_around_cursor,
)
from processors.tokens import get_counter
from schemas.messages import ChatMessage, TextPart
from streams.reader.recall import recall

COUNTER = get_counter()


def _msg(i: int) -> ChatMessage:
    return ChatMessage(id=f"m{i}", thread_id="t1", resource_id="r1", role="user", created_at=1_000 * i, parts=[TextPart(text=f"text {i}")])


def test_scenario_56_range_cursor_answers_with_a_hint_naming_both_ends() -> None:
    request = RecallRequest(cursor="abc:def")
    spec = cursor_page(request.page, request.limit)
    ends = parse_range("abc:def")
    assert ends is not None

    answer = notice_answer(request, spec, "abc:def", ends.hint("abc:def")).to_dict()

    assert 'cursor="abc"' in answer["messages"] and 'cursor="def"' in answer["messages"]
    assert answer["count"] == 0
    assert answer["hasNextPage"] is False and answer["hasPrevPage"] is False


def test_scenario_56_merged_ranges_name_the_first_start_and_the_last_end() -> None:
    ends = parse_range("a:b, c:d")

    assert ends is not None and (ends.start_id, ends.end_id) == ("a", "d")
    assert parse_range(":odd") is None and parse_range("odd:") is None and parse_range("plain") is None


def test_scenario_57_page_zero_is_page_one_and_limit_fifty_clamps_to_twenty() -> None:
    spec = cursor_page(RecallRequest(page=0, limit=50).page, 50)

    assert (spec.page, spec.limit, spec.fetch_count) == (1, 20, 21)


def test_scenario_57_page_minus_one_returns_the_messages_just_before_the_cursor() -> None:
    before_cursor_newest_first = [_msg(i) for i in range(9, -1, -1)]  # cursor is m10
    spec = cursor_page(-1, 3)

    window = window_around_cursor(before_cursor_newest_first[: spec.fetch_count], spec)
    answer = page_answer(RecallRequest(page=-1, limit=3), spec, window, COUNTER, cursor="m10", empty_text="-").to_dict()

    assert [m.id for m in window.items] == ["m7", "m8", "m9"]
    assert answer["messages"].index("[m7]") < answer["messages"].index("[m9]")
    assert answer["hasPrevPage"] is True and answer["hasNextPage"] is False


def test_scenario_58_thread_scope_threads_mode_lists_only_the_current_thread_marked() -> None:
    answer = current_thread_answer(ThreadInfo("t1", "Trip planning", 0, 86_400_000)).to_dict()

    assert answer == {
        "threads": "- **Trip planning** ← current\n  id: t1\n"
        "  updated: 1970-01-02 00:00:00Z | created: 1970-01-01 00:00:00Z",
        "count": 1,
        "page": 0,
        "hasMore": False,
    }


def test_scenario_59_search_when_not_configured_gives_the_fixed_text_and_count_zero() -> None:
    # Search off: recall answers before any query is built, so no database is involved.
    answer = recall(None, "r1", {"mode": "search", "query": "anything"}, search_enabled=False)  # type: ignore[arg-type]

    assert answer == {"results": SEARCH_NOT_CONFIGURED, "count": 0}
    assert SEARCH_NOT_CONFIGURED.startswith("Search is not configured")
