"""processors/text/needles.py: the folding is IGNORECASE's for every code point, and each pattern that
is passed by a search for its needles cannot match a text without them (generated texts, with
the characters case folding treats specially), so skipping its scan changes no answer."""

from __future__ import annotations

import random
import re
import string

import pytest

from processors.text.needles import folded, literal_starts, may_match
from processors.observer import checks
from streams.llm.deterministic import hints, observe, relative_dates

ODD = {"i": ["İ", "ı", "I"], "s": ["ſ", "S"], "k": ["K", "K"]}
WORDS = ["booked", "done", "sent", "cancelled", "canceled", "paid", "confirmed", "chose", "book", "go with",
         "going with", "picked", "decided on", "reserved", "stay at", "decided", "switched", "changed my mind",
         "instead of", "let's go with", "today", "tonight", "this morning", "tomorrow", "yesterday", "in 3 days",
         "2 days ago", "in 2 weeks", "3 weeks ago", "next week", "last week", "last month", "last friday",
         "on Tuesday", "by sunday", "until monday", "before Saturday", "next months", "in 4 months", "٣ weeks",
         "need to", "Have to", "going to", "will", "draft", "Asked to", "plans", "Memmo", "the", "weekend",
         "Tuesday May 12", "will", "not", "?", ".", "-", "'", "\n", "1"]


def _texts() -> list[str]:
    rng = random.Random(29)
    texts = []
    for _ in range(6000):
        text = rng.choice([" ", "", "  "]).join(rng.choice(WORDS) for _ in range(rng.randint(1, 6)))
        text = text.upper() if rng.random() < 0.15 else text.title() if rng.random() < 0.15 else text
        for _ in range(rng.randint(0, 2) if rng.random() < 0.4 else 0):  # a letter IGNORECASE folds oddly
            letter = rng.choice("iks")
            text = text.replace(letter, rng.choice(ODD[letter]), 1)
        texts.append(text)
    return texts


def test_folding_is_ignorecase_s_for_every_code_point() -> None:
    letters = re.compile("|".join(string.ascii_lowercase), re.IGNORECASE)
    matched = [c for c in map(chr, range(0x110000)) if letters.fullmatch(c)]
    for c in matched:
        assert [p for p in string.ascii_lowercase if re.fullmatch(p, c, re.IGNORECASE)] == [folded(c)], c
    assert len(matched) == 56  # a-z, A-Z and İ ı ſ K


def test_literal_starts() -> None:
    assert literal_starts("Booked", "cancell?ed", r"switch\w*", "go with", "chang(?:ed|ing)", "a+b") == (
        "booked", "cancel", "switch", "go with", "chang", "a")
    with pytest.raises(ValueError):
        literal_starts(r"\d+ days")


RELATIVE_RULES = re.compile("|".join(f"(?:{p.pattern})" for p, _ in relative_dates._RULES), re.IGNORECASE)
CASES = [
    (observe._DONE, lambda t: may_match(t, observe._DONE_NEEDLES)),
    (observe._CHOSE, lambda t: may_match(t, observe._CHOSE_NEEDLES)),
    (observe._DECISION, lambda t: may_match(t, observe._DECISION_NEEDLES)),
    (RELATIVE_RULES, lambda t: may_match(t, relative_dates._NEEDLES) or relative_dates._WEEKS.search(t) is not None),
    (checks._RELATIVE, lambda t: may_match(t, checks._RELATIVE_NEEDLES)),
    (hints._REQUEST, hints._may_request),
]


@pytest.mark.parametrize("index", range(len(CASES)))
def test_a_pattern_never_matches_a_text_without_its_needles(index: int) -> None:
    pattern, may = CASES[index]
    matches = skipped = 0
    for text in _texts():
        if pattern.search(text) is not None:
            matches += 1
            assert may(text), text
        skipped += not may(text)
    assert matches > 50 and skipped > 300, (matches, skipped)
