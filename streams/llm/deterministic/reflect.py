"""The offline Reflector: rewrites the log shorter, harder at each compression level (spec §5.8).

Not a language model: the same prompt always yields the same rewrite. What each level does
(each level also does everything the levels below it do):

* 0 — one group per day (notes of the same day from several cycles are merged), repeats dropped.
* 1 — superseded facts dropped: after "switched … from A to B", "cancelled A" or "instead of A",
  earlier clauses about A (and A's cancelled reference codes) go; 🟢 notes go except on the newest
  day; sub-notes of older days go.
* 2 — on older days, 🟡 notes keep only their first clause and answered questions go.
* 3 — on older days, 🟡 notes go and the rest merge into one line per priority, in telegraphic
  wording; on the newest day only the last 🟡 note stays.
* 4 — older days keep only finished work and clauses with specifics (numbers, codes, names),
  preferences, health or changes, in note-taking shorthand (no pronouns, auxiliaries or articles;
  negations stay), all on one line per day; the newest day is merged like
  older days at level 3 and keeps no 🟡 note but the last; a clause whose words and specifics all
  appear in one other clause, of a note at least as lasting, goes.

🔴 and ✅ notes are never dropped below level 4, and then only their incidental clauses; date headers and the (HH:MM) time of
each kept line survive.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from streams.llm.deterministic.clauses import CODE, compact, content_words, specifics, telegraph
from streams.llm.deterministic.notes import MARKERS, Day, Note, parse_log, render_log

_LEVEL = re.compile(r"COMPRESSION LEVEL (\d)")
_SECTION = "## OBSERVATIONS TO REFLECT ON\n"
_NAME = r"([A-ZÀ-Ý][\w'’-]+)"
_CHANGES = (("switch", re.compile(rf"\bswitch\w* (?:\w+ )?from {_NAME} to {_NAME}")),
            ("cancel", re.compile(rf"\bcancell?ed {_NAME}")), ("instead of ", re.compile(rf"\binstead of {_NAME}")))
"""Each pattern of a change, after a word it cannot match without: a clause without the word is
passed by a string search instead of a scan."""
_PERSONAL = re.compile(r"\b(?:allerg\w*|vegetarian|vegan|gluten|intoleran\w*|diabet\w*|pregnan\w*|injur\w*|ankle|"
                       r"medication|hates?|loves?|prefers?|likes?|dislikes?|never|always)\b", re.IGNORECASE)


def compression_level(prompt: str) -> int:
    found = _LEVEL.search(prompt)
    return int(found[1]) if found else 0


def observations_in(prompt: str) -> str:
    """What follows the section's heading up to the next ``## `` heading (string search: the lazy
    ``(.*?)(?=\\n## |\\Z)`` it replaces tested its look-ahead at every character of the log)."""
    start = prompt.find(_SECTION)
    if start < 0:
        return ""
    start += len(_SECTION)
    end = prompt.find("\n## ", start)
    return prompt[start : end if end >= 0 else len(prompt)].strip()


def reflect(prompt: str, system: str) -> str:
    text = compress(observations_in(prompt), compression_level(prompt))
    sections = [f"<observations>\n{text}\n</observations>"]
    if "<suggested-response>" in system:
        sections.append("<suggested-response>\nContinue with the most recent open item.\n</suggested-response>")
    return "\n\n".join(sections)


def compress(observations: str, level: int) -> str:
    blocks = parse_log(observations)
    if not any(isinstance(b, list) and b for b in blocks):
        return observations.strip()
    for n, block in enumerate(blocks):
        if isinstance(block, list) and block:
            blocks[n] = _compress_days(block, level)
    return render_log(blocks)


def _compress_days(days: list[Day], level: int) -> list[Day]:
    days = _merge_days(days)
    if level >= 1:
        _drop_superseded(days)
    *older, newest = days
    for day in older:
        day.notes = _older(day.notes, level)
    newest.notes = _newest(newest.notes, level)
    if level >= 4:
        _drop_redundant(days)
    return days


def _merge_days(days: list[Day]) -> list[Day]:
    merged: dict[str, Day] = {}
    rendered: dict[str, set[str]] = {}  # a merged day's notes, rendered: kept as it grows
    for day in days:
        into = merged.setdefault(day.header, Day(day.header, bare=day.bare))
        seen = rendered.setdefault(day.header, set())
        into.bare = into.bare and day.bare
        fresh = [(n, text) for n in day.notes if (text := n.render()) not in seen]
        into.notes.extend(n for n, _ in fresh)
        seen.update(text for _, text in fresh)
    return list(merged.values())


def _drop_superseded(days: list[Day]) -> None:
    notes = [note for day in days for note in day.notes]
    for position, note in enumerate(notes):
        for clause in note.clauses:
            for word, pattern in _CHANGES:
                for found in pattern.finditer(clause) if word in clause else ():
                    codes = set(CODE.findall(clause)) if word == "cancel" else set()
                    about = _about(found[1], codes)
                    for earlier in notes[:position]:
                        kept = [c for c in earlier.clauses if not about(c) or _is_change(c)]
                        if len(kept) < len(earlier.clauses):  # keeping every clause changes nothing
                            _keep(earlier, kept)
    for day in days:
        day.notes = [n for n in day.notes if n.clauses]


def _is_change(clause: str) -> bool:
    return any(word in clause and pattern.search(clause) for word, pattern in _CHANGES)


def _about(name: str, codes: set[str]) -> Callable[[str], bool]:
    """Whether a clause names ``name`` or one of ``codes``: the name's pattern compiled once for
    every earlier clause, the clause's codes read only when there are codes to look for."""
    mentions = re.compile(rf"\b{re.escape(name)}\b").search
    return lambda clause: mentions(clause) is not None or bool(codes) and bool(codes & set(CODE.findall(clause)))


def _keep(note: Note, clauses: list[str]) -> None:
    """Keep only ``clauses`` (a subsequence); without its first clause, "User is …" becomes
    "User: …", and a merged-in marker ("✅ booked A") moves to the next clause kept."""
    if clauses and note.clauses and clauses[0] != note.clauses[0]:
        note.separator = ": "
    kept, marker = [], ""
    for clause in note.clauses:
        if clause not in clauses:
            marker = marker or next((m for m in MARKERS if clause.startswith(f"{m} ")), "")
            continue
        if marker and kept and not clause.startswith(MARKERS):
            clause = f"{marker} {clause}"
        kept.append(clause)
        marker = ""
    note.clauses = kept


def _older(notes: list[Note], level: int) -> list[Note]:
    if level >= 1:
        notes = [n for n in notes if n.marker != "🟢"]
        for note in notes:
            note.subs = []
    if level >= 2:
        notes = [n for n in notes if not (n.marker == "🟡" and n.clauses[0].startswith("asked"))]
        for note in notes:
            if note.marker == "🟡":
                note.clauses = note.clauses[:1]
    if level >= 3:
        notes = _merge_by_marker([n for n in notes if n.marker != "🟡"])
    if level >= 4:
        for note in notes:
            _keep(note, [c for c in note.clauses if note.marker == "✅" or _essential(c)])
            note.clauses = [telegraph(c) for c in note.clauses]
        notes = _one_line([n for n in notes if n.clauses])
    return notes


def _essential(clause: str) -> bool:
    """What an older day keeps at the last level: specifics, preferences, health, changes."""
    return bool(specifics(clause)) or _PERSONAL.search(clause) is not None or _is_change(clause)


def _one_line(notes: list[Note]) -> list[Note]:
    """A whole older day as one note: its first note's time and marker (✅ last, as it is the outcome)."""
    if len(notes) < 2:
        return notes
    first, *rest = notes
    for note in rest:
        first.clauses.extend(f"{note.marker} {c}" if n == 0 else c for n, c in enumerate(note.clauses))
    return [first]


def _newest(notes: list[Note], level: int) -> list[Note]:
    if level < 3:
        return notes
    minor = [n for n in notes if n.marker == "🟡"]
    notes = [n for n in notes if n.marker != "🟡" or n is minor[-1]]
    if level >= 4:
        last = minor[-1:] if minor else []
        return _merge_by_marker([n for n in notes if n.marker != "🟡"]) + last
    return notes


def _merge_by_marker(notes: list[Note]) -> list[Note]:
    """One line per priority, at the time of its first note, in telegraphic wording."""
    merged: dict[str, Note] = {}
    for note in notes:
        clauses = [compact(c) for c in note.clauses]
        if note.marker not in merged:
            merged[note.marker] = Note(note.marker, note.time, clauses, note.speaker, note.separator)
        else:
            merged[note.marker].clauses.extend(clauses)
    order = {marker: n for n, marker in enumerate(MARKERS)}
    return sorted(merged.values(), key=lambda n: (n.time, order.get(n.marker, 9)))


def _drop_redundant(days: list[Day]) -> None:
    """A clause goes when one other clause of the log, in a note that lasts as long (🔴 and ✅
    outlast 🟡, which outlasts 🟢), says every word and specific of it. Words spread over several
    clauses do not count, nor does a note a later pass drops first: "Tomás is allergic to shellfish"
    is not repeated by "mentioned the allergy" and "no shellfish, please", nor by the assistant's
    🟡 "mention Tomás's shellfish allergy". Only the clauses that say the clause's rarest word can
    cover it: those are the ones compared."""
    clauses = [(note, c, content_words(c), specifics(c), _lasting(note))
               for day in days for note in day.notes for c in note.clauses]
    holding: dict[str, list[int]] = {}  # a word -> the clauses that say it (a covering clause says them all)
    for n, (_, _, words, _, _) in enumerate(clauses):
        for word in words:
            holding.setdefault(word, []).append(n)
    everyone = range(len(clauses))
    for note, clause, words, facts, lasting in clauses:
        if len(note.clauses) < 2:
            continue
        candidates = min((holding[word] for word in words), key=len) if words else everyone
        if any(c is not clause and last <= lasting and words <= w and facts <= f and c in n.clauses
               for n, c, w, f, last in map(clauses.__getitem__, candidates)):
            note.clauses.remove(clause)


def _lasting(note: Note) -> int:
    """How long a note survives the ladder: 0 for 🔴 and ✅, 1 for 🟡 (and unmarked), 2 for 🟢."""
    return {"🔴": 0, "✅": 0, "🟢": 2}.get(note.marker, 1)
