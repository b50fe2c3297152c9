"""Calendar arithmetic and wording for the dates the actor sees (spec §7.1, §7.6).

Observations carry absolute dates ("Date: May 15, 2023", "(meaning May 30, 2023)"); the actor
reasons better with "5 days ago" next to them, and with "2 hours later" between two messages.
Everything here is a pure function of its arguments: "now" is always passed in (the core has
no clock), and time zones come from :mod:`zoneinfo`.

Day counts are taken on the wall clock of the given zone, so a day that loses an hour to daylight
saving still counts as a day (Mastra divides raw milliseconds, which is the same thing in UTC).
"""

from __future__ import annotations

import math
import re
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

MINUTE_MS = 60_000
HOUR_MS = 60 * MINUTE_MS
DAY_MS = 24 * HOUR_MS
MIN_TEMPORAL_GAP_MS = 10 * MINUTE_MS

_MONTH_NAMES = [
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
]  # fmt: skip
_MONTHS = {name: number for number, name in enumerate(_MONTH_NAMES, start=1)}
_MONTHS |= {name[:3]: number for name, number in _MONTHS.items()}
_MONTHS["sept"] = 9
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\b\.?"

_EXACT = re.compile(rf"\b{_MONTH}\s+(\d{{1,2}}),?\s+(\d{{4}})", re.IGNORECASE)
_DAY_RANGE = re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})-\d{{1,2}},?\s+(\d{{4}})", re.IGNORECASE)
_PART_OF_MONTH = re.compile(
    rf"\b(early|mid|late)[- ]?(?:to[- ]?(?:early|mid|late)[- ]?)?{_MONTH}\s+(\d{{4}})",
    re.IGNORECASE,
)
_MONTH_SPAN = re.compile(rf"\b{_MONTH}\s+to\s+(?:early\s+)?{_MONTH}\s+(\d{{4}})", re.IGNORECASE)
_DAY_OF_PART = {"early": 7, "mid": 15, "late": 23}


def iso_timestamp(ms: int) -> str:
    """Epoch milliseconds as ISO 8601 UTC with milliseconds and ``Z`` (JavaScript's ``toISOString``)."""
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_observation_date(text: str) -> date | None:
    """The first date the Observer's wording pins down, or None.

    Accepted, in this order: "May 30, 2023"; a day range "May 27-28, 2023" (its first day);
    "early|mid|late May 2023" (the 7th, 15th, 23rd; "mid-to-late" counts as "mid"); a month span
    "April to May 2023" (the 1st of the second month; "April to early May" is early May).
    A day that does not exist ("February 30") makes the text unparseable rather than rolling
    over into the next month.
    """
    if found := _EXACT.search(text) or _DAY_RANGE.search(text):
        month, day, year = found.groups()
        return _calendar_date(int(year), _MONTHS[month.lower()], int(day))
    if found := _PART_OF_MONTH.search(text):
        part, month, year = found.groups()
        return _calendar_date(int(year), _MONTHS[month.lower()], _DAY_OF_PART[part.lower()])
    if found := _MONTH_SPAN.search(text):
        _, month, year = found.groups()
        return _calendar_date(int(year), _MONTHS[month.lower()], 1)
    return None


def parse_header_date(text: str) -> date | None:
    """A ``Date:`` header's "Month D, YYYY", or None if it names no real day."""
    found = _EXACT.fullmatch(text)
    if found is None:
        return None
    month, day, year = found.groups()
    return _calendar_date(int(year), _MONTHS[month.lower()], int(day))


def _calendar_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def day_key(now_ms: int, tz: str) -> tuple[date, bool]:
    """What :func:`days_since` and :func:`is_before_now` read of ``now_ms``: the day it falls on in
    ``tz``, and whether it is that day's first instant (the one instant at which the day itself
    has not begun to pass). Any two instants with the same key give both the same answers."""
    now = datetime.fromtimestamp(now_ms / 1000, ZoneInfo(tz)).replace(tzinfo=None)
    return now.date(), now == datetime(now.year, now.month, now.day)


def days_since(day: date, now_ms: int, tz: str) -> int:
    """Whole days from the start of ``day`` (in ``tz``) to now; negative when ``day`` is ahead."""
    now = datetime.fromtimestamp(now_ms / 1000, ZoneInfo(tz)).replace(tzinfo=None)
    return (now - datetime(day.year, day.month, day.day)) // timedelta(days=1)


def is_before_now(day: date, now_ms: int, tz: str) -> bool:
    """True once the first instant of ``day`` (in ``tz``) has passed."""
    now = datetime.fromtimestamp(now_ms / 1000, ZoneInfo(tz)).replace(tzinfo=None)
    return datetime(day.year, day.month, day.day) < now


def relative_day_label(days_ago: int) -> str:
    """"today", "3 weeks ago", "in 2 months"… for a day count from :func:`days_since`."""
    if days_ago == 0:
        return "today"
    if days_ago == 1:
        return "yesterday"
    if days_ago == -1:
        return "tomorrow"
    span = _day_span(abs(days_ago))
    return f"{span} ago" if days_ago > 0 else f"in {span}"


def _day_span(days: int) -> str:
    if days < 7:
        return f"{days} days"
    if days < 14:
        return "1 week"
    if days < 30:
        return f"{days // 7} weeks"
    if days < 60:
        return "1 month"
    if days < 365:
        return f"{days // 30} months"
    return _count(days // 365, "year")


def day_gap_line(days: int) -> str | None:
    """The "[N days later]" line between two date headers; None for consecutive or reversed days."""
    if days <= 1:
        return None
    return f"[{_day_span(days)} later]"


def temporal_gap_text(gap_ms: int) -> str | None:
    """How long the user was away, for the temporal-gap reminder (spec §7.6); None under 10 min.

    Two units at most, the smaller one floored and left out when zero ("1 hour 30 minutes later",
    "2 days later"). Pure minutes are rounded, so 59.6 minutes stays "59 minutes", never "60".
    """
    if gap_ms < MIN_TEMPORAL_GAP_MS:
        return None
    if gap_ms < HOUR_MS:
        minutes = min(59, max(1, int(gap_ms / MINUTE_MS + 0.5)))
        return f"{_count(minutes, 'minute')} later"
    _, (major_ms, major), (minor_ms, minor) = next(row for row in _GAP_UNITS if gap_ms < row[0])
    major_count, rest_ms = divmod(gap_ms, major_ms)
    parts = [_count(major_count, major)]
    if minor_count := rest_ms // minor_ms:
        parts.append(_count(minor_count, minor))
    return " ".join(parts) + " later"


_HOUR = (HOUR_MS, "hour")
_DAY = (DAY_MS, "day")
_WEEK = (7 * DAY_MS, "week")
_MONTH_OF_30_DAYS = (30 * DAY_MS, "month")
_YEAR = (365 * DAY_MS, "year")
# (gaps below this, major unit, minor unit), first match wins
_GAP_UNITS: list[tuple[float, tuple[int, str], tuple[int, str]]] = [
    (DAY_MS, _HOUR, (MINUTE_MS, "minute")),
    (7 * DAY_MS, _DAY, _HOUR),
    (30 * DAY_MS, _WEEK, _DAY),
    (365 * DAY_MS, _MONTH_OF_30_DAYS, _WEEK),
    (math.inf, _YEAR, _MONTH_OF_30_DAYS),
]


def _count(n: int, unit: str) -> str:
    return f"{n} {unit}" if n == 1 else f"{n} {unit}s"


# Abbreviations an en-US clock shows by name; any other zone is shown as its offset, "GMT+1".
_NAMED_IN_EN_US = {
    "EST", "EDT", "CST", "CDT", "MST", "MDT", "PST", "PDT",
    "AKST", "AKDT", "HST", "HDT", "AST", "ADT",
}  # fmt: skip
_UTC_ZONES = {"UTC", "Etc/UTC", "Etc/UCT", "UCT", "Universal", "Etc/Universal", "Zulu", "Etc/Zulu"}


def format_reminder_timestamp(ms: int, tz: str) -> str:
    """``MM/DD/YYYY, h:mm AM|PM <zone>`` — how Mastra's en-US locale prints a reminder's time."""
    local = datetime.fromtimestamp(ms / 1000, ZoneInfo(tz))
    hour12 = local.hour % 12 or 12
    meridiem = "AM" if local.hour < 12 else "PM"
    return (
        f"{local.month:02d}/{local.day:02d}/{local.year}, "
        f"{hour12}:{local.minute:02d} {meridiem} {_short_zone_name(local, tz)}"
    )


def _short_zone_name(local: datetime, tz: str) -> str:
    if tz in _UTC_ZONES:
        return "UTC"
    name = local.tzname() or ""
    if name in _NAMED_IN_EN_US:
        return name
    offset_minutes = int((local.utcoffset() or timedelta(0)) // timedelta(minutes=1))
    if offset_minutes == 0:
        return "GMT"
    sign = "+" if offset_minutes > 0 else "-"
    hours, minutes = divmod(abs(offset_minutes), 60)
    return f"GMT{sign}{hours}" + (f":{minutes:02d}" if minutes else "")
