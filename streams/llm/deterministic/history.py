"""Read back the Observer's rendered history (the format of ``processors.observer.render``).

The deterministic model only ever sees prompts this project built, so it can parse them
exactly: ``Dec 4 2024:`` day lines, ``Title (h:mm AM): body`` entries, continuation lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime

_DAY = re.compile(r"^([A-Z][a-z]{2}) (\d{1,2}) (\d{4}):$")
_ENTRY = re.compile(
    r"^(?P<title>User|Assistant|System|Tool|Signal|Reasoning|Image|File|Tool (?:Call|Result|Error|Denied) \S+)"
    r"(?: \((?P<time>\d{1,2}:\d{2} [AP]M)\))?: (?P<body>.*)$"
)
_THREAD_OPEN = re.compile(r'^<thread id="([^"]+)">$')


@dataclass
class Entry:
    day: date
    time: str
    title: str
    body: str


def parse_history(text: str) -> list[Entry]:
    entries: list[Entry] = []
    day: date | None = None
    time = "00:00"
    for raw in text.split("\n"):
        line = raw.rstrip()
        if (found := _DAY.match(line)) is not None:
            day = datetime.strptime(f"{found[1]} {found[2]} {found[3]}", "%b %d %Y").date()
            continue
        if (found := _ENTRY.match(line)) is not None and day is not None:
            if found["time"]:
                time = datetime.strptime(found["time"], "%I:%M %p").strftime("%H:%M")
            entries.append(Entry(day, time, found["title"], found["body"].strip()))
            continue
        if entries and line.strip() and not line.startswith("## "):
            entries[-1].body = f"{entries[-1].body} {line.strip()}".strip()
    return entries


def split_threads(text: str) -> dict[str, str] | None:
    """``{thread id: history}`` for a multi-thread history, ``None`` for a single thread."""
    threads: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.split("\n"):
        if (found := _THREAD_OPEN.match(line.strip())) is not None:
            current = threads.setdefault(found[1], [])
        elif line.strip() == "</thread>":
            current = None
        elif current is not None:
            current.append(line)
    return {tid: "\n".join(lines) for tid, lines in threads.items()} if threads else None
