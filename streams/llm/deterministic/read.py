"""Deterministic ``reader`` and ``judge`` models for ``om eval``'s plumbing test (not quality claims).

The reader answers with the context line that shares the most words with the question (the latest
such line on a tie, so a fact that changed reads as its newest value), stripped of dates, times and
markers. The judge says ``CORRECT`` when every word of the gold answer is in the answer, and, asked
whether memory notes keep a fact (``Notes:`` … ``Fact:``), ``KEPT`` when two thirds of the fact's
words are in the notes.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an the is are was were do does did what when where who which how to of in on at for "
                  "and or with by from as it its that this did has have had be been user assistant now".split())
_NOISE = re.compile(r"^\s*(?:[-*]\s*)?(?:[🔴🟡🟢✅]\s*)?(?:\(\d{1,2}:\d{2}\)\s*)?(?:\[[^\]]*\]\s*)?")
_QUESTION = re.compile(r"^Question:\s*(.+)$", re.M)


def read(texts: list[str]) -> str:
    """``texts``: every message of the prompt; the last one carries ``Question: …``."""
    asked = _QUESTION.findall(texts[-1]) if texts else []
    question = set(_words(asked[-1] if asked else "")) - _STOP
    best, best_score = "unknown", 0
    for text in texts[:-1]:
        for line in text.split("\n"):
            score = len(question & set(_words(line)))
            if score and score >= best_score:
                best, best_score = _NOISE.sub("", line).strip(), score
    return " ".join(best.split()[:40])


def judge(prompt: str) -> str:
    fact = re.search(r"^Fact:\s*(.+)$", prompt, re.M)
    if fact is not None and prompt.startswith("Notes:"):
        wanted = set(_words(fact[1])) - _STOP
        found = wanted & set(_words(prompt[:fact.start()]))
        return "KEPT" if len(found) * 3 >= len(wanted) * 2 else "MISSING"
    gold = re.search(r"^Gold answer:\s*(.+)$", prompt, re.M)
    given = re.search(r"^Answer to grade:\s*(.+)$", prompt, re.M)
    if gold is None or given is None:
        return "WRONG"
    return "CORRECT" if set(_words(gold[1])) <= set(_words(given[1])) else "WRONG"


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())
