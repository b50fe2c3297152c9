"""Resource scope: a thread's new notes join its existing ``<thread id>`` section (spec §4.9).

One record holds every thread of a resource; each observation cycle returns one
``<thread id="…">`` section per observed thread. Rules this module keeps:

* When the log already has a section for that thread (its first one) whose body carries the same
  ``Date: <Month D, YYYY>`` header as the new section, the new notes — everything after the new
  section's first date line — go in just before that section's closing tag, so one day of one
  thread stays one block.
* Otherwise the section is appended after a ``message boundary`` at that thread's newest observed
  message (Mastra: per thread, not per cycle).
* A section without a date header, or with nothing after it, is appended (or merged as nothing).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from processors.machine.activation import append_observations

CLOSE = "</thread>"
_SECTION = re.compile(r'<thread id="([^"]+)">\n?(.*?)\n?</thread>', re.S)
_DATE = re.compile(r"Date:\s*([A-Za-z]+\s+\d+,\s+\d+)")


def sections(text: str) -> list[tuple[str, str]]:
    """The ``(thread id, body)`` of each ``<thread id>`` section, in order."""
    return [(m.group(1), m.group(2)) for m in _SECTION.finditer(text)]


def merge_thread_section(existing: str, thread_id: str, body: str, at_ms: int) -> str:
    section = f'<thread id="{thread_id}">\n{body}\n{CLOSE}'
    if not existing:
        return section
    date = _DATE.search(section)
    start = existing.find(f'<thread id="{thread_id}">')
    close = existing.find(CLOSE, start) if start != -1 else -1
    if date and close != -1:
        end = close + len(CLOSE)
        old = existing[start:end]
        if f"Date: {date.group(1)}" in old or f"Date:{date.group(1)}" in old:
            line_end = section.find("\n", section.find("Date:"))
            notes = section[line_end + 1:section.rfind(CLOSE)].strip() if line_end != -1 else ""
            if notes:
                merged = f"{old[:-len(CLOSE)].rstrip()}\n{notes}\n{CLOSE}"
                return existing[:start] + merged + existing[end:]
    return append_observations(existing, section, at_ms)


def merge_cycle(existing: str, addition: str, newest_by_thread: Mapping[str, int], newest: int) -> str:
    """Apply one resource-scope cycle: each of its sections in turn; text outside sections (none is
    expected) is appended as in thread scope."""
    found = sections(addition)
    if not found:
        return append_observations(existing, addition, newest)
    text = existing
    for thread_id, body in found:
        text = merge_thread_section(text, thread_id, body, newest_by_thread.get(thread_id, newest))
    return text
