"""Deterministic reflections that really compress, harder at each compression level.

Notes are ranked by priority (🔴/✅ first) and recency; the best fraction for the level is kept
in log order, older kept notes are clipped, and from level 3 on neighbouring older notes of the
same day and priority are merged into one line. Date headers and (HH:MM) times survive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KEEP_RATIO = {0: 0.9, 1: 0.75, 2: 0.55, 3: 0.4, 4: 0.25}
OLD_LINE_CHARS = {0: 400, 1: 200, 2: 140, 3: 100, 4: 80}
_LEVEL = re.compile(r"COMPRESSION LEVEL (\d)")
_SECTION = re.compile(r"## OBSERVATIONS TO REFLECT ON\n(.*?)(?=\n## |\Z)", re.S)
_ITEM = re.compile(r"^(\s*)[*-]\s+(.*)$")
_PRIORITY = {"🔴": 3.0, "✅": 3.0, "🟡": 2.0, "🟢": 1.0}


@dataclass
class _Line:
    index: int
    text: str
    day: int
    kind: str  # 'date' | 'item' | 'sub' | 'frame'
    score: float = 0.0


def compression_level(prompt: str) -> int:
    found = _LEVEL.search(prompt)
    return int(found[1]) if found else 0


def observations_in(prompt: str) -> str:
    found = _SECTION.search(prompt)
    return found[1].strip() if found else ""


def reflect(prompt: str, system: str) -> str:
    level = compression_level(prompt)
    text = compress(observations_in(prompt), level)
    sections = [f"<observations>\n{text}\n</observations>"]
    if "<suggested-response>" in system:
        sections.append("<suggested-response>\nContinue with the most recent open item.\n</suggested-response>")
    return "\n\n".join(sections)


def compress(observations: str, level: int) -> str:
    lines = _classify(observations)
    notes = [line for line in lines if line.kind in ("item", "sub")]
    if not notes:
        return observations.strip()
    keep = max(1, round(len(notes) * KEEP_RATIO.get(level, 0.25)))
    for position, line in enumerate(notes):
        line.score = _weight(line) + 2.0 * position / len(notes)
    kept_ids = {line.index for line in sorted(notes, key=lambda n: (-n.score, -n.index))[:keep]}
    kept = [line for line in notes if line.index in kept_ids]
    old_cut = kept[len(kept) // 2].index if kept else 0
    for line in kept:
        if line.index < old_cut:
            line.text = _clip(line.text, OLD_LINE_CHARS.get(level, 80))
    if level >= 3:
        kept = _merge_old(kept, old_cut)
    return _assemble(lines, kept)


def _classify(text: str) -> list[_Line]:
    out: list[_Line] = []
    day = 0
    seen: set[str] = set()
    for index, raw in enumerate(text.split("\n")):
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or stripped.startswith("--- message boundary"):
            continue
        if stripped.startswith("Date:"):
            day += 1
            out.append(_Line(index, stripped, day, "date"))
            continue
        item = _ITEM.match(line)
        if item is None:
            out.append(_Line(index, line, day, "frame"))
            continue
        if stripped in seen:
            continue
        seen.add(stripped)
        out.append(_Line(index, line, day, "sub" if item[1] else "item"))
    return out


def _weight(line: _Line) -> float:
    if line.kind == "sub":
        return 0.5
    body = _ITEM.match(line.text)[2]  # type: ignore[index]
    return next((w for marker, w in _PRIORITY.items() if body.startswith(marker)), 1.0)


def _merge_old(kept: list[_Line], old_cut: int) -> list[_Line]:
    merged: list[_Line] = []
    for line in kept:
        previous = merged[-1] if merged else None
        if (
            previous is not None
            and line.index < old_cut
            and line.kind == previous.kind == "item"
            and line.day == previous.day
            and _marker(line) == _marker(previous)
        ):
            previous.text = f"{previous.text}; {_ITEM.match(line.text)[2][len(_marker(line)):].strip()}"  # type: ignore[index]
            continue
        merged.append(line)
    return merged


def _marker(line: _Line) -> str:
    body = _ITEM.match(line.text)[2]  # type: ignore[index]
    return next((m for m in _PRIORITY if body.startswith(m)), "")


def _assemble(lines: list[_Line], kept: list[_Line]) -> str:
    kept_by_index = {line.index: line for line in kept}
    days_with_notes = {line.day for line in kept}
    out = []
    for line in lines:
        if line.kind == "date" and line.day in days_with_notes:
            out.append(line.text)
        elif line.kind == "frame":
            out.append(line.text)
        elif line.index in kept_by_index:
            out.append(kept_by_index[line.index].text)
    return "\n".join(out)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
