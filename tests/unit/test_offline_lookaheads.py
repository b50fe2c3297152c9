"""streams/llm/deterministic/clauses.py ``one_of``: a look-ahead for the alternatives' first characters
changes no match. Each pattern built with it is compared with the pattern as it was written before
(spelled out here), on the bench corpus and on text made of the characters case folding treats
specially (ſ matches s, ı matches i, K matches k under IGNORECASE)."""

from __future__ import annotations

import random
import re

import pytest

from bench.corpus import messages
from streams.llm.deterministic import clauses, hints, observe
from streams.llm.deterministic.clauses import one_of

BEFORE = [
    (observe._DONE, r"\b(?:booked|done|sent|approved|cancell?ed|received|finished|completed|paid|bought|fixed|shipped|"
                    r"merged|submitted|delivered|signed|reserved|ordered|confirmed)\b", re.IGNORECASE),
    (observe._NOT_DONE, r"\b(?:will|'ll|need to|going to|want to|should|if|not|haven't|didn't)\b|\?$", re.IGNORECASE),
    (observe._CHOSE, r"\b(?:chose|booked|book|go with|going with|picked|decided on|reserved|stay at)\s+"
                     r"(?:the |a )?([A-ZÀ-Ý][\w'’-]+)", 0),
    (observe._SWITCH_TO, r"\b(switch(?:ed|ing)?|chang(?:ed|ing)|mov(?:ed|ing)) to ([A-ZÀ-Ý][\w'’-]+)", 0),
    (observe._DECISION, r"^let'?s go with\b|\b(?:chose|decided|picked|go with|switch\w*|changed my mind|instead of)\b",
     re.IGNORECASE),
    (hints._REQUEST, r"\?$|^(?:asked to|will|need|needs|want|wants|plan|plans)\b|\b(?:need to|have to|want to|going "
                     r"to)\b|^(?:draft|write|book|find|plan|make|send|check|add|fix|shortlist|compare)\b", re.IGNORECASE),
    (clauses._FILLER_WORDS, r"\b(?:the|a|an|about|around|roughly|usually|comfortably|really|just|very|please|so far|"
                            r"at least|easy|excellent|user can|which has)\s+", re.IGNORECASE),
]
WORDS = ["booked", "done", "cancelled", "will", "they'll", "need to", "going to", "didn't", "chose", "go with",
         "going with", "stay at", "switched", "changing", "moved", "to", "Prado", "Hotel", "the", "a", "so far",
         "at least", "user can", "which has", "instead of", "changed my mind", "let's go with", "have to", "?"]
ODD = ["ſ", "ı", "İ", "K", "’", "'", "-", "_", "9", "É", " ", "\n", ",", "."]


def _texts() -> list[str]:
    corpus = [part["text"] for m in messages(4, 20, salt="lookahead") for part in m.model_dump()["parts"]
              if part.get("type") == "text"]
    rng = random.Random(7)
    made = []
    for _ in range(3000):
        pieces = [rng.choice(WORDS) for _ in range(rng.randint(1, 8))]
        text = " ".join(pieces)
        for _ in range(rng.randint(0, 4)):  # odd characters in and between words, cases swapped
            at = rng.randint(0, len(text))
            text = text[:at] + rng.choice(ODD) + text[at:]
        made.append(text.upper() if rng.random() < 0.2 else text.title() if rng.random() < 0.2 else text)
    return corpus + made


@pytest.mark.parametrize("index", range(len(BEFORE)))
def test_a_pattern_with_the_look_ahead_matches_what_it_matched_without(index: int) -> None:
    now, before, flags = BEFORE[index][0], re.compile(BEFORE[index][1], BEFORE[index][2]), BEFORE[index][2]
    assert now.flags & re.IGNORECASE == flags & re.IGNORECASE
    for text in _texts():
        assert [(m.span(), m.groups()) for m in now.finditer(text)] == \
               [(m.span(), m.groups()) for m in before.finditer(text)], text
        assert now.sub("~", text) == before.sub("~", text)


def test_the_odd_characters_do_match_under_ignorecase() -> None:
    """The texts above would prove little if case folding did not reach these characters."""
    assert observe._DONE.search("ſent") and observe._NOT_DONE.search("ıf") and clauses._FILLER_WORDS.search("just ")


def test_an_alternative_must_start_with_a_literal_character() -> None:
    with pytest.raises(ValueError):
        one_of("done", r"\bsent")
    with pytest.raises(ValueError):
        one_of("(?:a|b)c")
    assert one_of("ab", "cd", capture=True) == "(?=[ac])(ab|cd)"
