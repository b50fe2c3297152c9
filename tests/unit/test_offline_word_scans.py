"""streams/llm/deterministic/clauses.py: the scans that start at a character class (``\\b`` tested
in a look-behind) find what the ``\\b``-first patterns found, and ``words``/``content_words`` (an
ASCII text cut by translate and split, each distinct word's stem remembered) give what a
``findall`` of ``[\\w'’-]+`` gave; compared with the versions before (spelled out here) on the bench
corpus and on text with characters case and word boundaries treat specially; and ``sentences``,
which runs its two joining and splitting patterns only on pieces that end as they must and splits
at a pattern that starts with its space, splits as before."""

from __future__ import annotations

import random
import re

from bench.corpus import messages
from streams.llm.deterministic import clauses

NUMBER_BEFORE = re.compile(r"\b\d[\d,.:]*[a-z]*\b", re.IGNORECASE)
CODE_BEFORE = re.compile(r"\b[A-Z]{2,}[\w]*-?\d[\w-]*\b")
NAME_BEFORE = re.compile(r"\b[A-ZÀ-Ý][\w'’-]+")
SPLIT_BEFORE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])|\s(?=\d\)\s)")
WORD = re.compile(r"[\w'’-]+")
PIECES = ["MPR-1", "AB12", "A1", "ABC", "xAB-9", "_AB1", "12", "3.5", "10:02", "1,200km", "9th", "x9", "_9",
          "Prado", "Élan", "×Y", "Ýes", "O'Neil", "Zoë’s", "it's", "re-booked", "K", "ſ", "İ", "ı", "Σ", "٣",
          "the", "an", "ok", "-", "'", "’", "_", " ", "\t", "\n", ".", ",", ":", "é", "\x1c", "\u00a0", "\u2028"]


def _texts() -> list[str]:
    corpus = [part["text"] for m in messages(4, 20, salt="scans") for part in m.model_dump()["parts"]
              if part.get("type") == "text"]
    rng = random.Random(13)
    made = []
    for _ in range(4000):
        text = rng.choice(["", " ", "-"]).join(rng.choice(PIECES) for _ in range(rng.randint(1, 10)))
        made.append(text.lower() if rng.random() < 0.2 else text)
    ascii_only = [t.encode("ascii", "ignore").decode() for t in made]
    return corpus + made + ascii_only


def test_the_class_first_scans_find_what_the_boundary_first_ones_found() -> None:
    for text in _texts():
        for now, before in ((clauses._NUMBER, NUMBER_BEFORE), (clauses.CODE, CODE_BEFORE),
                            (clauses._NAME, NAME_BEFORE)):
            assert [m.span() for m in now.finditer(text)] == [m.span() for m in before.finditer(text)], text
            assert bool(now.fullmatch(text)) == bool(before.fullmatch(text)), text


def test_words_and_content_words_are_what_findall_gave() -> None:
    for text in _texts():
        assert clauses.words(text) == set(WORD.findall(text.lower())), text
        assert clauses.content_words(text) == frozenset(
            clauses.stem(w) for w in set(WORD.findall(text.lower()))
            if w not in clauses.STOPWORDS and (len(w) > 2 or w.isdigit())), text


def _sentences_before(text: str) -> tuple[str, ...]:
    flat = " ".join(text.split())
    out: list[str] = []
    pieces: list[str] = []
    for piece in SPLIT_BEFORE.split(flat):
        if pieces and (re.fullmatch(r"\d+\.|.*:\s\d+\.", pieces[-1]) or pieces[-1].endswith(":")):
            pieces[-1] = f"{pieces[-1]} {piece}"
        else:
            pieces.append(piece)
    for piece in pieces:
        piece = piece.strip()
        found = clauses._TRAILING_QUESTION.match(piece)
        out.extend([found["statement"].strip() + ".", found["question"]] if found else [piece] if piece else [])
    return tuple(out)


def test_sentences_split_as_before() -> None:
    rng = random.Random(31)
    pieces = ["1.", "2)", "3) ", "Shortlist (5 nights):", "Done.\t\u00a0Next", "(see)", "'x'", '"Y"',
              "I'm allergic to nuts, is that a problem?", "Booked it!", "Why?",
              "ok.", "Note: 3.", "Prado is far", ",", "is", "?", "\n", "  ", "Which one?", "A. B", "x: 12."]
    texts = [" ".join(rng.choice(pieces) for _ in range(rng.randint(1, 8))) for _ in range(3000)] + _texts()
    for text in texts:
        assert clauses.sentences(text) == _sentences_before(text), text
        assert clauses._SPLIT.split(text) == SPLIT_BEFORE.split(text), text


def test_a_texts_words_and_specifics_put_together_from_its_lines_are_the_texts() -> None:
    """What the offline Observer's memory learns from a whole log is assembled from its lines' words
    and specifics (streams/llm/deterministic/observe.py ``Memory.learn``): the same sets, including
    a log whose first space comes late (names count only after it) and lines that start with names."""
    texts = _texts()
    rng = random.Random(17)
    logs = ["\n".join(rng.sample(texts, rng.randint(1, 12))) for _ in range(1500)]
    logs += ["Maya\nMemmo booked MPR-1", "\nPrado Lumiares", "Date:\nÉlan ×Y at 10:02", "Zoë’s\n\nO'Neil 3.5",
             "no capitals\nPrado AB12", "MPR-1"]
    for log in logs:
        assert clauses.content_words_by_line(log) == clauses.content_words(log), log
        assert clauses.lower_specifics_by_line(log) == {s.lower() for s in clauses.specifics(log)}, log
