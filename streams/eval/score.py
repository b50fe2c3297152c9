"""Scoring short answers: exact match and token F1 after normalising (lower case, no punctuation
or articles), the usual reading-comprehension measures; and the judge's prompt and verdict."""

from __future__ import annotations

import re
from collections import Counter

_PUNCT = re.compile(r"[^\w\s]")
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalise(text: str) -> list[str]:
    return _ARTICLES.sub(" ", _PUNCT.sub(" ", text.lower())).split()


def exact(answer: str, gold: str) -> float:
    return float(normalise(answer) == normalise(gold))


def f1(answer: str, gold: str) -> float:
    got, want = normalise(answer), normalise(gold)
    if not got or not want:
        return float(got == want)
    common = sum((Counter(got) & Counter(want)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(got), common / len(want)
    return 2 * precision * recall / (precision + recall)


def judge_prompt(question: str, gold: str, answer: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": "You grade answers to questions about a conversation. An answer is "
                                      "correct when it states the gold answer's fact, in any wording; extra "
                                      "detail is fine, a different or missing fact is not. Reply with one "
                                      "word: CORRECT or WRONG."},
        {"role": "user", "content": f"Question: {question}\nGold answer: {gold}\nAnswer to grade: {answer}"},
    ]


def judged_correct(verdict: str) -> bool:
    return verdict.strip().upper().startswith("CORRECT")
