"""The actor's observation text reads "now" only through ``day_key`` (the reader keeps it per row and
day key: streams/reader/api.py), so any two instants with one key give byte-identical text.

Checked on a log dated around the instants (headers, inline dates, intentions on the very day), in
zones with DST changes and odd offsets, at each day's first instant, just after it, mid-day and its
last millisecond; and the key does change where the text does (midnight, the next day).
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from processors.context import day_key, observations_for_actor

ZONES = ("UTC", "Europe/Berlin", "America/Los_Angeles", "Asia/Kolkata", "Pacific/Chatham")
DAYS = (date(2025, 3, 8), date(2025, 3, 9), date(2025, 3, 30), date(2025, 10, 26), date(2025, 11, 2))


def _log(around: date) -> str:
    lines: list[str] = []
    for offset in range(-2, 3):
        day = around + timedelta(days=offset)
        stamp = day.strftime("%b %-d, %Y")
        lines += [f"Date: {stamp}",
                  f"* 🔴 (09:00) User will fly to Lisbon (meaning {stamp})",
                  f"* 🟡 (10:00) [label] User mentioned the review -> done (estimated {stamp})"]
    return "\n".join(lines)


def _instants(day: date, zone: str) -> list[int]:
    start = datetime(day.year, day.month, day.day, tzinfo=ZoneInfo(zone))
    first = int(start.timestamp() * 1000)
    following = day + timedelta(days=1)  # its own midnight: a DST day is not 24 hours long
    nxt = int(datetime(following.year, following.month, following.day, tzinfo=ZoneInfo(zone)).timestamp() * 1000)
    return [first, first + 1, first + 3_600_000, (first + nxt) // 2, nxt - 1, nxt, nxt + 1]


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("grouped", [False, True])
def test_instants_with_one_day_key_give_one_text(zone: str, grouped: bool) -> None:
    for day in DAYS:
        log = _log(day)
        by_key: dict[tuple[date, bool], set[str]] = {}
        for now in _instants(day, zone):
            by_key.setdefault(day_key(now, zone), set()).add(observations_for_actor(log, now, zone, grouped=grouped))
        assert all(len(texts) == 1 for texts in by_key.values()), (zone, day)
        keys = sorted(by_key)
        assert (day, True) in by_key and (day, False) in by_key, "the day's first instant has a key of its own"
        assert by_key[(day, True)] != by_key[(day, False)], "and the text differs there: the day has begun"
        assert len(keys) == 4, "midnight and the rest of the day, of this day and the next"
