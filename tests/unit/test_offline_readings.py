"""streams/llm/deterministic/observe.py ``reading``/``wording`` and hints.py ``_request``: what a
sentence is and how it reads are remembered per sentence, and only the memory's part is redone.
The offline Observer's answers are compared with the rules as written before (spelled out here,
without the remembered readings) on generated histories whose sentences come back call after call,
under different previous observations, so a remembered reading meets other memories; and a change
is named (``_names_a_change``) exactly where the switch and cancellation patterns find one."""

from __future__ import annotations

import random
import re

import pytest

from streams.llm.deterministic import hints, observe
from streams.llm.deterministic.clauses import compact, content_words, sentences, strip_filler, third_person, tidy
from streams.llm.deterministic.relative_dates import resolve

SENTENCES = [
    "Hi! I'm Maya.", "We booked the Memmo hotel, confirmation MPR-1.", "Wonderful! Enjoy your stay.",
    "Want me to plan the days?", "Thanks! I'm allergic to peanuts.", "Can you find a vegan place for next Tuesday?",
    "I changed my mind: we switched to Lumiares.", "Also I cancelled Memmo.", "I cancelled Lumiares.",
    "Lumiares has river view suites at 195 euros a night.", "Let's go with Prado.", "We chose Memmo for 3 nights.",
    "I need to book a train tomorrow.", "Booked Prado! Confirmation number PR-88.", "I will not pay 40 euros.",
    "Noted: Maya prefers aisle seats.", "Great!", "Sounds great!", "The museum opens at 10:00 in 2 days.",
    "I moved to Porto last week.", "You should check the ferry, is that ok?", "I'd compare the two hotels.",
    "Instead of Lisbon we go to Faro on Friday.", "I paid the deposit of 120 euros yesterday.",
    "Switching to Memmo, they have parking.", "What time is checkout?", "I am vegetarian and hate mushrooms.",
]


def _clauses_before(entry, role, memory):
    out = []
    for sentence in sentences(entry.body):
        question = sentence.endswith("?")
        if role == "assistant" and (question or observe._RECAP.match(sentence) or len(out) >= observe.ASSISTANT_CLAUSES
                                    or sentence.endswith("!") and not re.search(r"\d", sentence)):
            continue
        rest = strip_filler(sentence)
        if not rest:
            continue
        done = role == "user" and bool(observe._DONE.search(rest)) and not observe._NOT_DONE.search(rest)
        if not done and not observe._DECISION.search(rest) and not memory.is_new(rest):
            continue
        if role == "assistant" and not (observe._lower_facts(rest) - memory.facts):
            continue
        text, verb_first = third_person(rest, role)
        text = observe._name_the_change(tidy(text), entry.body, memory)
        if role == "assistant":
            text = observe._clip(compact(text), observe.ASSISTANT_CHARS)
        if question and role == "user" and not text.startswith("asked"):
            text, verb_first = f"asked: {text}", True
        marker = "🟡" if role == "assistant" or question else "✅" if done else "🔴"
        if marker == "🔴" and out and out[-1].marker == "✅" and observe.CODE.search(text):
            marker = "✅"
        found = resolve(rest, entry.day)
        out.append(observe.Clause(marker, text, verb_first, found.note if found else ""))
    return out


def _current_task_before(entries, task):
    answered = False
    for entry in reversed(entries):
        if entry.title != "User":
            answered = answered or entry.title == "Assistant"
            continue
        for sentence in reversed(sentences(entry.body)):
            rest = strip_filler(sentence)
            if answered and rest.endswith("?"):
                continue
            text = tidy(third_person(rest, "user")[0]) if rest else ""
            asked = text if not rest.endswith("?") else rest
            if text and len(content_words(text)) >= 3 and hints._REQUEST.search(asked):
                return f"Primary: {hints._clip(text, 100)}"
    prior = hints._PRIOR_TASK.search(task)
    return (prior[1] or prior[2]).strip() if prior else "Waiting for the user"


def _history(rng: random.Random, pool: list[str]) -> str:
    lines = ["## New Message History to Observe"]
    for day in range(rng.randint(1, 3)):
        lines.append(f"Nov {26 + day} 2026:")
        for minute in range(rng.randint(1, 6)):
            body = " ".join(rng.choice(pool) for _ in range(rng.randint(1, 3)))
            lines.append(f"{rng.choice(['User', 'Assistant'])} (9:{minute:02d} AM): {body}")
    return "\n".join(lines)


SYSTEM = "<current-task>\n…\n</current-task>\n<suggested-response>\n…\n</suggested-response>"


def test_the_observer_answers_as_it_did_without_remembered_readings(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(23)
    pool = SENTENCES[:]
    cases = []
    for n in range(400):
        previous = "" if n % 3 == 0 else "Date: Nov 25, 2026\n" + "\n".join(
            f"* 🔴 (08:0{k}) User {rng.choice(SENTENCES).rstrip('.!?')}" for k in range(rng.randint(1, 4)))
        cases.append((previous, _history(rng, pool)))
    now = [observe.observe(SYSTEM, previous, history) for previous, history in cases]
    monkeypatch.setattr(observe, "_clauses", _clauses_before)
    monkeypatch.setattr(hints, "_current_task", _current_task_before)
    before = [observe.observe(SYSTEM, previous, history) for previous, history in cases]
    assert now == before
    assert sum("switched from" in a for a in now) > 10 and sum("Primary:" in a for a in now) > 10


def test_a_change_is_named_where_the_patterns_find_one() -> None:
    rng = random.Random(2)
    words = ["switched", "to", "Memmo", "cancelled", "Prado", "changing", "moved", "cancel", "led", " to", "to "]
    for _ in range(3000):
        text = rng.choice([" ", "", "-"]).join(rng.choice(words) for _ in range(rng.randint(1, 6)))
        before = observe._SWITCH_TO.search(text) is not None or observe._CANCEL.search(text) is not None
        assert observe._names_a_change(text) == before, text
