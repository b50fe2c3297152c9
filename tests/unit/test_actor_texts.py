"""Issue 19: the reader keeps the log's actor text by content and day key (streams/reader/actor_texts.py)."""

from __future__ import annotations

from datetime import datetime, timezone

from processors.context import observations_for_actor
from streams.reader.actor_texts import ActorTexts

LOG = "\n".join(["Date: Mar 8, 2025", "* 🔴 (09:00) User will fly to Lisbon (meaning Mar 9, 2025)",
                 "* 🟡 (10:00) [label] User asked -> answered"] * 20)
NOON = int(datetime(2025, 3, 9, 12, tzinfo=timezone.utc).timestamp() * 1000)


def test_a_log_read_again_in_a_new_row_is_not_made_again() -> None:
    texts = ActorTexts()
    first = texts.get(LOG, NOON, "UTC", grouped=False)
    again = texts.get("".join(list(LOG)), NOON + 3_600_000, "UTC", grouped=False)  # another str, equal
    assert first == again == observations_for_actor(LOG, NOON, "UTC", grouped=False)
    assert texts.made == 1


def test_another_day_zone_grouping_or_log_is_made_anew_and_each_is_right() -> None:
    texts = ActorTexts()
    cases = [(LOG, NOON, "UTC", False), (LOG, NOON + 86_400_000, "UTC", False), (LOG, NOON, "Asia/Tokyo", False),
             (LOG, NOON, "UTC", True), (LOG + "\n* 🟡 (11:00) more", NOON, "UTC", False)]
    for log, now, tz, grouped in cases:
        assert texts.get(log, now, tz, grouped=grouped) == observations_for_actor(log, now, tz, grouped=grouped)
    assert texts.made == len(cases)


def test_the_least_recently_read_go_first_past_the_byte_budget() -> None:
    one = len(LOG) + len(observations_for_actor(LOG, NOON, "UTC", grouped=False))
    texts = ActorTexts(max_bytes=2 * one + one // 2)  # room for two
    days = [NOON + n * 86_400_000 for n in range(3)]
    for now in days:
        texts.get(LOG, now, "UTC", grouped=False)
    texts.get(LOG, days[2], "UTC", grouped=False)
    texts.get(LOG, days[1], "UTC", grouped=False)
    assert texts.made == 3
    texts.get(LOG, days[0], "UTC", grouped=False)
    assert texts.made == 4, "the first day's text was dropped"
    huge = ActorTexts(max_bytes=10)
    assert huge.get(LOG, NOON, "UTC", grouped=False) == observations_for_actor(LOG, NOON, "UTC", grouped=False)
    assert huge.get(LOG, NOON, "UTC", grouped=False) and huge.made == 2, "over the budget: made, not kept"
