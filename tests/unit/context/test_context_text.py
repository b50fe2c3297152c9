"""What the actor reads of its observations: optimised text, relative dates, temporal gaps."""

from __future__ import annotations

import re
from datetime import date, datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from processors.context.text import (
    add_relative_time_to_observations,
    format_reminder_timestamp,
    optimize_observations_for_context,
    temporal_gap_text,
)
from processors.context.dates import parse_observation_date, relative_day_label

MINUTE = 60_000
HOUR = 60 * MINUTE
DAY = 24 * HOUR


def ms(*args: int) -> int:
    return int(datetime(*args, tzinfo=timezone.utc).timestamp() * 1000)


MAY_20_2023 = ms(2023, 5, 20)

# --- optimize_observations_for_context --------------------------------------------------------


def test_s47_optimizer_strips_minor_emoji_arrow_and_labels() -> None:
    assert optimize_observations_for_context("* 🟡 (14:30) Agent -> viewed [tag] file") == (
        "* (14:30) Agent viewed file"
    )


def test_s47_important_and_done_markers_keep_their_emoji() -> None:
    text = (
        "* 🔴 (09:00) Deadline [deadline, work] is Friday\n"
        "* ✅ (10:00) Deployed\n"
        "* 🟢 (11:00) Chatted"
    )
    assert optimize_observations_for_context(text) == (
        "* 🔴 (09:00) Deadline is Friday\n* ✅ (10:00) Deployed\n* (11:00) Chatted"
    )


def test_anchor_ids_go_and_nested_bullets_stay_nested() -> None:
    text = "* [O12] 🔴 (09:00) User moved\n  * [O3-N2] -> to Lisbon"
    assert optimize_observations_for_context(text) == "* 🔴 (09:00) User moved\n  * to Lisbon"


def test_collapse_markers_and_markdown_link_labels_survive() -> None:
    text = "* [72 items collapsed - ID: b1fa]\n* read [the docs](https://docs.example) [reading]"
    assert optimize_observations_for_context(text) == (
        "* [72 items collapsed - ID: b1fa]\n* read [the docs](https://docs.example)"
    )


def test_blank_line_runs_collapse_and_outer_whitespace_is_trimmed() -> None:
    text = "\n\n* a\n\n\n\n* b   ->   c  \n\n\n"
    assert optimize_observations_for_context(text) == "* a\n\n* b c"


def test_an_arrow_never_joins_two_lines() -> None:
    assert optimize_observations_for_context("* step one ->\n* step two") == "* step one\n* step two"


# --- add_relative_time_to_observations -----------------------------------------------------------


def _whole_text_passes(text: str) -> str:
    """The optimizer as it was written before it went line by line: each pass over the whole text."""
    for pattern, replacement in ((r"\[O\d+(?:-N\d+)*\][ \t]*", ""), (r"[🟡🟢][ \t]*", ""),
                                 (r"\[(?![\d\s]*items collapsed)[^\]\n]+\](?!\()", ""), (r"[ \t]*->[ \t]*", " "),
                                 (r"(?<=\S) {2,}", " ")):
        text = re.sub(pattern, replacement, text)
    text = re.sub(r"[ \t]+$", "", text, flags=re.MULTILINE)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


_PIECES = ["* ", "  * ", "[O12] ", "[O3-N2]", "🟡 ", "🟢", "🔴 ", "✅ ", "[tag]", "[docs](x)", "[72 items collapsed - ID: b1]",
           "[3 ", "items collapsed]", "->", " -> ", "  ", "\t", " ", "\n", "\n\n\n", "\r", "[", "]", "(", ")", "word",
           "Date: May 15, 2023", "(meaning May 16, 2023)", "é", "\u00a0"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_PIECES), max_size=12).map("".join), max_size=30))
def test_the_line_by_line_optimizer_equals_the_whole_text_passes(logs: list[str]) -> None:
    """Logs that share lines (a memo hit) and ones that do not give what the whole-text passes give."""
    for log in logs + ["\n".join(logs), "\n".join(reversed(logs))]:
        assert optimize_observations_for_context(log) == _whole_text_passes(log)


def test_s48_date_headers_get_relative_time_and_a_gap_line() -> None:
    text = "Date: May 15, 2023\n* a\nDate: May 20, 2023\n* b"
    assert add_relative_time_to_observations(text, MAY_20_2023) == (
        "Date: May 15, 2023 (5 days ago)\n* a\n\n[5 days later]\n\nDate: May 20, 2023 (today)\n* b"
    )


@pytest.mark.parametrize(
    ("second_header", "gap_line"),
    [
        ("May 2, 2023", None),
        ("May 8, 2023", "[1 week later]"),
        ("May 15, 2023", "[2 weeks later]"),
        ("May 31, 2023", "[1 month later]"),
        ("July 5, 2023", "[2 months later]"),
        ("April 20, 2023", None),
    ],
)
def test_gap_lines_between_headers(second_header: str, gap_line: str | None) -> None:
    annotated = add_relative_time_to_observations(
        f"Date: May 1, 2023\n* a\nDate: {second_header}\n* b", ms(2023, 8, 1)
    )
    if gap_line is None:
        assert "later]" not in annotated
    else:
        assert f"* a\n\n{gap_line}\n\nDate: {second_header} (" in annotated


def test_headers_across_a_year_boundary() -> None:
    text = "Date: December 28, 2023\n* a\nDate: January 2, 2024\n* b"
    assert add_relative_time_to_observations(text, ms(2024, 1, 3, 9)) == (
        "Date: December 28, 2023 (6 days ago)\n* a\n\n[5 days later]\n\n"
        "Date: January 2, 2024 (yesterday)\n* b"
    )


def test_headers_that_name_no_real_day_are_left_alone() -> None:
    text = "Date: February 29, 2023\n* a\nDate: Someday 3, 2023\nDate: February 29, 2024"
    assert add_relative_time_to_observations(text, ms(2024, 3, 1)) == (
        "Date: February 29, 2023\n* a\nDate: Someday 3, 2023\nDate: February 29, 2024 (yesterday)"
    )


def test_inline_past_plan_is_marked_likely_already_happened() -> None:
    text = "* 🔴 (09:00) User will attend a wedding (meaning May 13, 2023)"
    assert add_relative_time_to_observations(text, MAY_20_2023) == (
        "* 🔴 (09:00) User will attend a wedding "
        "(meaning May 13, 2023 - 1 week ago, likely already happened)"
    )


@pytest.mark.parametrize(
    "intent",
    [
        "plans to",
        "is planning to",
        "looking forward to",
        "is going to",
        "intends to",
        "wants to",
        "needs to",
        "is about to",
    ],
)
def test_every_future_intent_phrase_counts(intent: str) -> None:
    text = f"* User {intent} visit Rome (estimated May 1, 2023)"
    annotated = add_relative_time_to_observations(text, MAY_20_2023)
    assert annotated.endswith("(estimated May 1, 2023 - 2 weeks ago, likely already happened)")


def test_past_fact_without_intent_only_gets_relative_time() -> None:
    text = "* User visited Rome (meaning May 19, 2023)"
    assert add_relative_time_to_observations(text, MAY_20_2023) == (
        "* User visited Rome (meaning May 19, 2023 - yesterday)"
    )


def test_future_plan_is_not_marked_as_happened() -> None:
    text = "* User will fly to Oslo (meaning June 3, 2023)"
    assert add_relative_time_to_observations(text, MAY_20_2023) == (
        "* User will fly to Oslo (meaning June 3, 2023 - in 2 weeks)"
    )


def test_intent_on_an_earlier_line_does_not_leak() -> None:
    text = "* User will rest\n* Trip happened (meaning May 1, 2023)"
    annotated = add_relative_time_to_observations(text, MAY_20_2023)
    assert annotated.endswith("(meaning May 1, 2023 - 2 weeks ago)")


def test_several_inline_dates_on_one_line() -> None:
    text = (
        "* Moved (meaning May 19, 2023), visit planned (estimated late June 2023), "
        "trip (estimated May 27-28, 2023)"
    )
    assert add_relative_time_to_observations(text, MAY_20_2023) == (
        "* Moved (meaning May 19, 2023 - yesterday), "
        "visit planned (estimated late June 2023 - in 1 month), "
        "trip (estimated May 27-28, 2023 - in 1 week)"
    )


def test_unparseable_inline_dates_stay_as_written() -> None:
    text = "* (estimated sometime in 2023) (meaning February 30, 2023) (estimated May 3)"
    assert add_relative_time_to_observations(text, MAY_20_2023) == text


def test_inline_and_header_together() -> None:
    text = "Date: May 19, 2023\n* User will call mom (meaning May 19, 2023)"
    assert add_relative_time_to_observations(text, ms(2023, 5, 19, 18)) == (
        "Date: May 19, 2023 (today)\n"
        "* User will call mom (meaning May 19, 2023 - today, likely already happened)"
    )


def test_days_are_counted_in_the_given_time_zone() -> None:
    text = "Date: May 19, 2023"
    now = ms(2023, 5, 20, 2)  # still May 19 (19:00) in Los Angeles
    assert add_relative_time_to_observations(text, now) == "Date: May 19, 2023 (yesterday)"
    in_los_angeles = add_relative_time_to_observations(text, now, "America/Los_Angeles")
    assert in_los_angeles == "Date: May 19, 2023 (today)"


def test_a_daylight_saving_day_still_counts_as_a_day() -> None:
    text = "Date: March 11, 2024"  # New York springs forward on March 10
    assert add_relative_time_to_observations(text, ms(2024, 3, 12, 4, 30), "America/New_York") == (
        "Date: March 11, 2024 (yesterday)"
    )


@pytest.mark.parametrize(
    ("days", "label"),
    [
        (0, "today"), (1, "yesterday"), (2, "2 days ago"), (6, "6 days ago"), (7, "1 week ago"),
        (13, "1 week ago"), (14, "2 weeks ago"), (29, "4 weeks ago"), (30, "1 month ago"),
        (59, "1 month ago"), (60, "2 months ago"), (364, "12 months ago"), (365, "1 year ago"),
        (729, "1 year ago"), (730, "2 years ago"),
        (-1, "tomorrow"), (-2, "in 2 days"), (-7, "in 1 week"), (-20, "in 2 weeks"), (-45, "in 1 month"),
        (-90, "in 3 months"), (-365, "in 1 year"), (-800, "in 2 years"),
    ],
)  # fmt: skip
def test_relative_day_labels(days: int, label: str) -> None:
    assert relative_day_label(days) == label


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("May 30, 2023", date(2023, 5, 30)),
        ("Sept 3 2023", date(2023, 9, 3)),
        ("May 27-28, 2023", date(2023, 5, 27)),
        ("early May 2023", date(2023, 5, 7)),
        ("mid-to-late May 2023", date(2023, 5, 15)),
        ("late April 2023", date(2023, 4, 23)),
        ("April to May 2023", date(2023, 5, 1)),
        ("late April to early May 2023", date(2023, 5, 7)),
        ("sometime in 2023", None),
    ],
)
def test_observer_date_wordings(content: str, expected: date | None) -> None:
    assert parse_observation_date(content) == expected


# --- temporal gaps ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gap_ms", "text"),
    [
        (10 * MINUTE - 1_000, None),
        (10 * MINUTE, "10 minutes later"),
        (HOUR + 30 * MINUTE, "1 hour 30 minutes later"),
        (2 * DAY, "2 days later"),
    ],
)
def test_s60_temporal_gap_text(gap_ms: int, text: str | None) -> None:
    assert temporal_gap_text(gap_ms) == text


@pytest.mark.parametrize(
    ("gap_ms", "text"),
    [
        (10 * MINUTE + 29_999, "10 minutes later"),
        (10 * MINUTE + 30_000, "11 minutes later"),
        (HOUR - 1, "59 minutes later"),
        (HOUR, "1 hour later"),
        (2 * HOUR + MINUTE, "2 hours 1 minute later"),
        (DAY - 1, "23 hours 59 minutes later"),
        (DAY + 3 * HOUR, "1 day 3 hours later"),
        (8 * DAY, "1 week 1 day later"),
        (21 * DAY + 5 * HOUR, "3 weeks later"),
        (45 * DAY, "1 month 2 weeks later"),
        (364 * DAY, "12 months later"),
        (400 * DAY, "1 year 1 month later"),
        (730 * DAY, "2 years later"),
    ],
)
def test_temporal_gap_units_and_plurals(gap_ms: int, text: str) -> None:
    assert temporal_gap_text(gap_ms) == text


@pytest.mark.parametrize(
    ("instant", "tz", "text"),
    [
        (MAY_20_2023, "UTC", "05/20/2023, 12:00 AM UTC"),
        (ms(2023, 5, 20, 12), "UTC", "05/20/2023, 12:00 PM UTC"),
        (ms(2023, 5, 20, 13, 5), "Etc/UTC", "05/20/2023, 1:05 PM UTC"),
        (MAY_20_2023, "America/New_York", "05/19/2023, 8:00 PM EDT"),
        (ms(2023, 1, 20, 15), "America/New_York", "01/20/2023, 10:00 AM EST"),
        (ms(2023, 1, 20, 15), "America/Los_Angeles", "01/20/2023, 7:00 AM PST"),
        (MAY_20_2023, "Asia/Kolkata", "05/20/2023, 5:30 AM GMT+5:30"),
        (ms(2023, 1, 20, 15), "Europe/Berlin", "01/20/2023, 4:00 PM GMT+1"),
        (ms(2023, 1, 20, 15), "Europe/London", "01/20/2023, 3:00 PM GMT"),
        (ms(2023, 1, 20, 15), "America/Sao_Paulo", "01/20/2023, 12:00 PM GMT-3"),
    ],
)
def test_reminder_timestamp_format(instant: int, tz: str, text: str) -> None:
    assert format_reminder_timestamp(instant, tz) == text
