"""streams/llm/deterministic/reflect.py: the string search for the observations section, a change
looked for only where its word is, and the superseded-fact pass that compiles a name's pattern once
(and leaves a note alone when it keeps every clause) give what the versions before them (spelled out
here) gave, on generated clauses, logs and prompts."""

from __future__ import annotations

import copy
import random
import re

from streams.llm.deterministic import reflect
from streams.llm.deterministic.notes import Day, parse_log, render_log

NAME = r"([A-ZÀ-Ý][\w'’-]+)"
CHANGES_BEFORE = (re.compile(rf"\bswitch\w* (?:\w+ )?from {NAME} to {NAME}"), re.compile(rf"\bcancell?ed {NAME}"),
                  re.compile(rf"\binstead of {NAME}"))
CODE_BEFORE = re.compile(r"\b[A-Z]{2,}[\w]*-?\d[\w-]*\b")
SECTION_BEFORE = re.compile(r"## OBSERVATIONS TO REFLECT ON\n(.*?)(?=\n## |\Z)", re.S)
CLAUSES = ["switched from Prado to Memmo", "switched hotel from Memmo to Prado", "cancelled Prado", "cancelled Memmo",
           "booked Prado (PR-123)", "booked Memmo, ref MM-9", "instead of Lisbon", "Prado has a pool",
           "flies to Lisbon",
           "code PR-123 noted", "MM-9 confirmed", "Pradoville is far", "likes Memmo's roof", "paid 40 euros",
           "✅ booked Lisbon tour LT-7", "cancelled LT-7 tour", "asked: is Prado open?"]
MARKERS = ["🔴", "✅", "🟡", "🟢"]


def _drop_superseded_before(days: list[Day]) -> None:
    notes = [note for day in days for note in day.notes]
    for position, note in enumerate(notes):
        for clause in note.clauses:
            for pattern in CHANGES_BEFORE:
                for found in pattern.finditer(clause):
                    codes = set(CODE_BEFORE.findall(clause)) if "cancel" in pattern.pattern else set()
                    for earlier in notes[:position]:
                        reflect._keep(earlier, [c for c in earlier.clauses if _is_change_before(c) or not (
                            re.search(rf"\b{re.escape(found[1])}\b", c) is not None
                            or bool(codes & set(CODE_BEFORE.findall(c))))])
    for day in days:
        day.notes = [n for n in day.notes if n.clauses]


def _is_change_before(clause: str) -> bool:
    return any(pattern.search(clause) for pattern in CHANGES_BEFORE)


def test_a_change_is_what_it_was() -> None:
    rng = random.Random(8)
    for _ in range(3000):
        clause = rng.choice(["", " ", "-"]).join(rng.choice(CLAUSES + ["switch", "from", "to", "instead of", "Prado"])
                                                 for _ in range(rng.randint(1, 5)))
        assert reflect._is_change(clause) == _is_change_before(clause), clause


def _log(rng: random.Random) -> str:
    lines = []
    for day in range(rng.randint(1, 4)):
        lines.append(f"Date: Mar {day + 1}, 2024")
        for minute in range(rng.randint(1, 6)):
            speaker = rng.choice(["User ", "User: ", "Assistant ", ""])
            clauses = "; ".join(rng.choice(CLAUSES) for _ in range(rng.randint(1, 4)))
            lines.append(f"* {rng.choice(MARKERS)} (10:{minute:02d}) {speaker}{clauses}")
            if rng.random() < 0.2:
                lines.append("  * -> sub-note about Prado")
    return "\n".join(lines)


def test_superseded_facts_go_as_they_went() -> None:
    rng = random.Random(17)
    changed = 0
    for _ in range(600):
        blocks = parse_log(_log(rng))
        before, given = copy.deepcopy(blocks), render_log(blocks)
        reflect._drop_superseded(blocks[0])
        _drop_superseded_before(before[0])
        assert render_log(blocks) == render_log(before)
        separators = [[n.separator for n in d.notes] for d in blocks[0]]
        assert separators == [[n.separator for n in d.notes] for d in before[0]]
        changed += render_log(blocks) != given
    assert changed > 300, "most generated logs have something superseded"


def test_the_observations_section_is_read_as_before() -> None:
    rng = random.Random(4)
    pieces = ["## OBSERVATIONS TO REFLECT ON\n", "\n## ", "## ", "\n", "Date: Mar 1, 2024", "* 🔴 (10:00) x",
              "\n##", "COMPRESSION LEVEL 2", " ", "## OBSERVATIONS TO REFLECT ON"]
    for _ in range(3000):
        prompt = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 10)))
        found = SECTION_BEFORE.search(prompt)
        assert reflect.observations_in(prompt) == (found[1].strip() if found else ""), prompt
