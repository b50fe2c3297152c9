"""Pagination rules of recall: look-ahead flags, direction, anchors, clamping."""

from __future__ import annotations

import pytest

from processors.recall import cursor_page, thread_page, window_around_cursor, window_from_anchor


@pytest.mark.parametrize(
    ("page", "limit", "expected"),
    [(None, None, (1, 20)), (-99, 5, (-50, 5)), (99, 0, (50, 20)), (-2, 7, (-2, 7))],
)
def test_cursor_page_clamps(page: int | None, limit: int | None, expected: tuple[int, int]) -> None:
    spec = cursor_page(page, limit)
    assert (spec.page, spec.limit) == expected


def test_forward_pages_use_the_extra_row_as_look_ahead() -> None:
    after = list(range(1, 8))  # 7 messages after the cursor
    first = window_around_cursor(after[:4], cursor_page(1, 3))
    second = window_around_cursor(after[:7], cursor_page(2, 3))
    third = window_around_cursor(after[:10], cursor_page(3, 3))

    assert (first.items, first.has_next_page, first.has_prev_page) == ([1, 2, 3], True, False)
    assert (second.items, second.has_next_page, second.has_prev_page) == ([4, 5, 6], True, True)
    assert (third.items, third.has_next_page, third.has_prev_page) == ([7], False, True)


def test_backward_pages_come_out_oldest_first_and_flip_the_flags() -> None:
    before_newest_first = [9, 8, 7, 6, 5]
    second = window_around_cursor(before_newest_first, cursor_page(-2, 2))
    last = window_around_cursor(before_newest_first, cursor_page(-3, 2))

    assert (second.items, second.has_next_page, second.has_prev_page) == ([6, 7], True, True)
    assert (last.items, last.has_next_page, last.has_prev_page) == ([5], True, False)


def test_anchor_start_and_end() -> None:
    oldest_first = [1, 2, 3, 4]
    newest_first = [4, 3, 2, 1]

    start = window_from_anchor(oldest_first[:3], thread_page(1, 2), "start")
    end = window_from_anchor(newest_first[:3], thread_page(1, 2), "end")
    past_the_end = window_from_anchor(oldest_first, thread_page(5, 2), "start")

    assert (start.items, start.has_next_page, start.has_prev_page) == ([1, 2], True, False)
    assert (end.items, end.has_next_page, end.has_prev_page) == ([4, 3], False, True)
    assert (past_the_end.items, past_the_end.has_next_page, past_the_end.has_prev_page) == ([], False, True)


def test_thread_pages_below_one_read_as_one() -> None:
    assert thread_page(-3, None).page == 1
