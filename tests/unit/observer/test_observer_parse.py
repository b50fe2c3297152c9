import random
import string
from dataclasses import dataclass

from processors.config import BUILTIN_EXTRACTORS
from processors.observer.degenerate import is_degenerate, truncate_long_lines
from processors.observer.parse import parse_observer_answer

def _prose(length: int) -> str:
    """Non-repeating text (a fixed seed keeps it the same on every run)."""
    return "".join(random.Random(7).choices(string.ascii_lowercase + " ", k=length))


GOOD = "Date: Dec 4, 2024\n* 🔴 (17:33) User stated they live in Rome."


def test_s44_two_blocks_joined_and_mid_sentence_tag_ignored():
    answer = (
        "<observations>\nDate: Dec 4, 2024\n* 🔴 (17:33) User stated A.\n</observations>\n"
        "The notes mention <observations> here but this is prose.\n"
        "<observations>\n* 🟡 (17:40) Assistant did B.\n</observations>"
    )
    parsed = parse_observer_answer(answer, [])
    assert parsed.observations == "Date: Dec 4, 2024\n* 🔴 (17:33) User stated A.\n* 🟡 (17:40) Assistant did B."


def test_s44_no_tags_keeps_list_items_only():
    parsed = parse_observer_answer("Sure! Here you go:\nDate: Dec 4, 2024\n* 🔴 (10:00) X\n  - 🟡 (10:01) Y\nThanks", [])
    assert parsed.observations == "Date: Dec 4, 2024\n* 🔴 (10:00) X\n  - 🟡 (10:01) Y"
    assert any("no <observations> block" in w for w in parsed.warnings)


def test_unclosed_observations_block_is_kept_up_to_the_next_section():
    answer = f"<observations>\n{GOOD}\n<current-task>\nBook flights\n"
    parsed = parse_observer_answer(answer, BUILTIN_EXTRACTORS)
    assert parsed.observations == GOOD
    assert parsed.current_task == "Book flights"
    assert any("unclosed" in w for w in parsed.warnings)


def test_hints_and_title_parsed_and_stripped():
    answer = (
        f"<observations>\n{GOOD}\n</observations>\n<current-task>\nPrimary: plan trip\n</current-task>\n"
        "<suggested-response>\nAsk about dates\n</suggested-response>\n<thread-title>Rome Trip</thread-title>"
    )
    parsed = parse_observer_answer(answer, BUILTIN_EXTRACTORS)
    assert (parsed.current_task, parsed.suggested_response, parsed.thread_title) == (
        "Primary: plan trip", "Ask about dates", "Rome Trip")
    assert parsed.warnings == []


def test_s45_long_line_cut_and_huge_line_truncated_not_degenerate():
    line = "* 🔴 (10:00) " + _prose(12_000)
    parsed = parse_observer_answer(f"<observations>\nDate: Dec 4, 2024\n{line}\n</observations>", [])
    long_line = parsed.observations.split("\n")[1]
    assert long_line.endswith(" … [truncated]") and len(long_line) == 10_000 + len(" … [truncated]")
    huge = "Date: Dec 4, 2024\n* 🔴 (10:00) " + _prose(60_000)
    parsed_huge = parse_observer_answer(f"<observations>\n{huge}\n</observations>", [])
    assert not parsed_huge.degenerate and parsed_huge.observations


def test_s46_repeated_long_lines_degenerate_short_tool_lines_not():
    looping = "\n".join(["* 🟡 (10:00) " + "the model keeps writing exactly this same long sentence " * 1 + "ok"] * 300)
    assert is_degenerate(truncate_long_lines(looping))
    assert parse_observer_answer(f"<observations>\n{looping}\n</observations>", []).degenerate
    tool_lines = "\n".join(["* -> pnpm build → ok"] * 200)
    assert len(tool_lines) > 2000 and not is_degenerate(tool_lines)


def test_format_warnings_for_missing_markers_dates_times_and_relative_dates():
    answer = "<observations>\n* (10:00) User stated X.\n* 🔴 User will fly tomorrow.\n</observations>"
    warnings = " | ".join(parse_observer_answer(answer, []).warnings)
    assert "no 'Date: Mon D, YYYY' header" in warnings
    assert "1 observations without a priority marker" in warnings
    assert "1 observations without a (HH:MM) time" in warnings
    assert "1 relative dates without '(meaning <date>)'" in warnings
    resolved = "<observations>\nDate: Dec 4, 2024\n* 🔴 (10:00) User flies tomorrow (meaning Dec 5, 2024)\n</observations>"
    assert parse_observer_answer(resolved, []).warnings == []


@dataclass
class Inline:
    name: str
    slug: str
    instructions: str = "say it"
    json_schema: dict | None = None
    mode: str = "inline"
    include_previous_extraction: bool = True


def test_custom_inline_sections_are_removed_from_observations():
    answer = f"<observations>\n{GOOD}\n</observations>\n<mood>\ncalm\n</mood>"
    parsed = parse_observer_answer(answer, [Inline("Mood", "mood")])
    assert parsed.custom_values() == {"mood": "calm"} and "calm" not in parsed.observations


def test_lines_differing_only_by_time_or_date_are_a_loop_but_a_recurring_task_with_its_amounts_is_not():
    by_time = "\n".join(f"* 🟡 ({9 + i // 60}:{i % 60:02d}) Assistant is waiting for the user to confirm the booking."
                        for i in range(40))
    assert len(by_time) > 2000 and is_degenerate(by_time)
    by_date = "\n".join(f"* 🔴 User said on Mar {1 + i % 28}, 2024 that the hotel booking is still open." for i in range(40))
    assert is_degenerate(by_date)
    by_marker = "\n".join(f"* {'🔴🟡'[i % 2]} (10:{i:02d}) User repeated that the deadline is still next week." for i in range(40))
    assert is_degenerate(by_marker)
    topics = ["the museum pass", "a ferry to the islands", "the rental car deposit", "dinner near the harbour",
              "a guided walk", "train seats to Faro", "the hotel upgrade", "a day trip to Sintra", "surf lessons",
              "the airport transfer", "a fado concert", "the castle tickets", "a cooking class", "beach towels",
              "the late checkout", "a tram day ticket", "wine tasting", "a bike tour", "the travel insurance",
              "a picnic spot"]
    ledger = "\n".join(f"* 🟡 (10:{i:02d}) User logged day {i}: spent {10 * i + 7} euros on food and {i % 9} on trams.\n"
                       f"* 🔴 (10:{i:02d}) User asked about {topic} for day {i}." for i, topic in enumerate(topics))
    assert len(ledger) > 2000 and not is_degenerate(ledger)  # a recurring entry beside real content
    counted = "\n".join(f"* 🟡 (10:{i:02d}) Still waiting for the build, check number {i} of the release pipeline."
                        for i in range(40))
    assert is_degenerate(counted)  # only a counter changes: nearly every line repeats with numbers masked


def test_a_loop_too_short_to_be_degenerate_is_salvaged_to_its_distinct_lines():
    """SmolLM2-135M's answer: one line five times, below the degenerate checks' length."""
    answer = ("<observations>\nDate: May 25, 2023\n* 🔴 (13:19) Caroline went to a support group.\n"
              + "* The assistant will continue the task.\n" * 5
              + "* 🟡 (13:20) Ran build\n  * -> ok\n* 🟡 (13:21) Ran tests\n  * -> ok\n</observations>")
    parsed = parse_observer_answer(answer, [])
    assert not parsed.degenerate
    assert parsed.observations.count("The assistant will continue the task.") == 1
    assert parsed.observations.count("  * -> ok") == 2  # short sub-notes keep their places
    assert "4 repeated line(s) dropped" in parsed.warnings
