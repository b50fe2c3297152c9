"""Read and write an observation log as days of notes of clauses — what the offline Reflector edits.

A note is ``* <marker> (<HH:MM>) <Speaker> <clause>; <clause>…`` with indented sub-notes under it;
``Date: Mon D, YYYY`` opens a day. Any other line (a ``<thread id>`` tag, free text) is kept where
it stands and separates the log into blocks, so days are only merged within a block. Message
boundary lines are dropped: a rewrite replaces the whole log. A day header with no notes under it
is kept (a background reflection's slice may end right after a header; the day's notes follow
the rewrite), a day whose notes were all dropped is not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MARKERS = ("🔴", "✅", "🟡", "🟢")
_NOTE = re.compile(r"^[*-]\s+(?:(🔴|🟡|🟢|✅)\s*)?(?:\((\d{1,2}:\d{2})\)\s*)?(.*)$")
_SPEAKER = re.compile(r"^(User|Assistant)(:?) (.*)$")
_DATE = re.compile(r"^Date:\s")


@dataclass
class Note:
    marker: str
    time: str
    clauses: list[str]
    speaker: str = ""
    separator: str = " "
    subs: list[str] = field(default_factory=list)

    def render(self) -> str:
        head = " ".join(p for p in ("*", self.marker, f"({self.time})" if self.time else "") if p)
        body = "; ".join(self.clauses)
        if self.speaker:
            body = f"{self.speaker}{self.separator}{body}"
        return "\n".join([f"{head} {body}", *self.subs])


@dataclass
class Day:
    header: str
    notes: list[Note] = field(default_factory=list)
    bare: bool = True  # written without notes: its notes follow outside the rewritten text

Block = list[Day] | str


def parse_log(text: str) -> list[Block]:
    blocks: list[Block] = []
    days: list[Day] | None = None
    for raw in text.split("\n"):
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or stripped.startswith("--- message boundary"):
            continue
        if _DATE.match(stripped):
            if days is None:
                days = []
                blocks.append(days)
            days.append(Day(stripped))
            continue
        found = _NOTE.match(line)
        if found is not None and days:
            days[-1].notes.append(_note(found))
            days[-1].bare = False
        elif raw[:1].isspace() and days and days[-1].notes:
            days[-1].notes[-1].subs.append(line)
        else:
            blocks.append(line)
            days = None
    return blocks


def render_log(blocks: list[Block]) -> str:
    out: list[str] = []
    for block in blocks:
        if isinstance(block, str):
            out.append(block)
            continue
        for day in block:
            if day.notes or day.bare:
                out.append(day.header)
                out.extend(note.render() for note in day.notes)
    return "\n".join(out)


def _note(found: re.Match[str]) -> Note:
    marker, time, body = found[1] or "", found[2] or "", found[3]
    speaker = _SPEAKER.match(body)
    if speaker is None:
        return Note(marker, time, body.split("; "))
    return Note(marker, time, speaker[3].split("; "), speaker[1], f"{speaker[2]} ")
