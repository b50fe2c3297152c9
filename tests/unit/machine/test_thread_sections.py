"""Resource scope merges a thread's new notes into its section of the same day (spec §4.9, issue 16.5)."""

from __future__ import annotations

from processors.machine.thread_sections import merge_cycle, merge_thread_section
from schemas.record import boundary

AT = 1_767_603_660_000  # 2026-01-05T09:01:00Z
ISO = "2026-01-05T09:01:00.000Z"


def test_first_section_is_the_log() -> None:
    assert merge_thread_section("", "t1", "Date: Jan 5, 2026\n* 🔴 (09:01) a", AT) == (
        '<thread id="t1">\nDate: Jan 5, 2026\n* 🔴 (09:01) a\n</thread>')


def test_same_thread_same_day_joins_the_existing_section() -> None:
    existing = '<thread id="t1">\nDate: Jan 5, 2026\n* 🔴 (09:01) a\n</thread>'
    merged = merge_thread_section(existing, "t1", "Date: Jan 5, 2026\n* 🟡 (09:05) b\n* 🔴 (09:06) c", AT)
    assert merged == '<thread id="t1">\nDate: Jan 5, 2026\n* 🔴 (09:01) a\n* 🟡 (09:05) b\n* 🔴 (09:06) c\n</thread>'


def test_another_day_or_another_thread_is_appended_after_a_boundary() -> None:
    existing = '<thread id="t1">\nDate: Jan 5, 2026\n* 🔴 (09:01) a\n</thread>'
    next_day = merge_thread_section(existing, "t1", "Date: Jan 6, 2026\n* 🔴 (09:01) d", AT)
    assert next_day == existing + boundary(ISO) + '<thread id="t1">\nDate: Jan 6, 2026\n* 🔴 (09:01) d\n</thread>'
    other = merge_thread_section(existing, "t2", "Date: Jan 5, 2026\n* 🔴 (09:02) e", AT)
    assert other == existing + boundary(ISO) + '<thread id="t2">\nDate: Jan 5, 2026\n* 🔴 (09:02) e\n</thread>'


def test_only_the_first_section_of_a_thread_is_a_merge_target() -> None:
    first = '<thread id="t1">\nDate: Jan 5, 2026\n* a\n</thread>'
    later = '<thread id="t1">\nDate: Jan 6, 2026\n* b\n</thread>'
    existing = first + boundary(ISO) + later
    merged = merge_thread_section(existing, "t1", "Date: Jan 6, 2026\n* c", AT)
    assert merged == existing + boundary(ISO) + '<thread id="t1">\nDate: Jan 6, 2026\n* c\n</thread>'


def test_a_cycle_of_two_threads_merges_each_at_its_own_time() -> None:
    existing = '<thread id="t1">\nDate: Jan 5, 2026\n* a\n</thread>'
    addition = ('<thread id="t1">\nDate: Jan 5, 2026\n* b\n</thread>\n'
                '<thread id="t2">\nDate: Jan 5, 2026\n* c\n</thread>')
    merged = merge_cycle(existing, addition, {"t1": AT, "t2": AT + 60_000}, AT + 60_000)
    assert merged == ('<thread id="t1">\nDate: Jan 5, 2026\n* a\n* b\n</thread>'
                      + boundary("2026-01-05T09:02:00.000Z") + '<thread id="t2">\nDate: Jan 5, 2026\n* c\n</thread>')
