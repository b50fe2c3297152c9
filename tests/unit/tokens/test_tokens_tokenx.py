"""The tokenx port against the real package: expected values generated once with node + tokenx."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from processors.tokens.tokenx import _word_tokens, estimate_token_count

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "tokenx_expected.json").read_text("utf-8"))


@pytest.mark.parametrize("case", FIXTURE["cases"], ids=[case["name"] for case in FIXTURE["cases"]])
def test_matches_tokenx(case: dict) -> None:
    assert estimate_token_count(case["text"]) == case["tokens"]


def test_fixture_covers_the_tricky_families() -> None:
    names = {case["name"] for case in FIXTURE["cases"]}
    for family in ("code_python", "cjk_japanese", "emoji", "numbers", "punctuation", "long_word", "url"):
        assert family in names
    assert "tokenx 1.6.0" in FIXTURE["generator"]


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("a\n  b", 3),  # newline followed by indentation carries structure: 1
        ("a\n\nb", 3),  # blank line: newline followed by whitespace
        ("a \nb", 2),  # newline at the end of the run: plain whitespace
        ("...", 1),  # punctuation run of 3 is "short"
        ("....", 2),  # ceil(4 / 2)
        ("1234567", 3),  # digits: ceil(7 / 3)
        ("abcdefg", 2),  # default: ceil(7 / 6)
        ("Straße", 3),  # German: ceil(6 / 2.6)
        ("日本語", 3),  # CJK: one per character
        ("😀", 2),  # emoji: ceil(1 / 0.75)
    ],
)
def test_rules(text: str, tokens: int) -> None:
    assert estimate_token_count(text) == tokens


# An obviously-faithful walk over tokenx's segments, to check the regrouped fast sum against.
_JS_SPACE = "\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_PUNCT = re.escape("!\"#$%&()*+,-./:;<=>?@[\\]^_`{|}~")
_SEGMENTS = re.compile(f"([{_JS_SPACE}]+|[{_PUNCT}]+)")


def _reference(text: str) -> int:
    total = 0
    for segment in filter(None, _SEGMENTS.split(text)):
        if re.fullmatch(f"[{_JS_SPACE}]+", segment):
            total += 1 if re.search(f"\n[{_JS_SPACE}]", segment) else 0
        elif re.fullmatch(f"[{_PUNCT}]+", segment):
            total += 1 if len(segment) <= 3 else math.ceil(len(segment) / 2)
        elif re.fullmatch("[0-9]+", segment):
            total += math.ceil(len(segment) / 3)
        elif segment.isascii():
            total += 1 if len(segment) <= 3 else math.ceil(len(segment) / 6)
        else:
            total += _word_tokens(segment)
    return total


_ALPHABET = st.sampled_from(
    list("ab1 9\t\n\r.,!?-_'\"(){}[]/\\:;#*") + ["\xa0", "\u3000", "\ufeff", "\x1c", "é", "ß", "日", "か", "😀", "\u200d"]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_ALPHABET, max_size=60).map("".join))
def test_fast_sum_equals_segment_walk(text: str) -> None:
    assert estimate_token_count(text) == _reference(text)


def test_long_single_word_stays_fast() -> None:
    """A 2 MB base64 blob is one huge word; the regexes must not go quadratic on it."""
    blob = "QUJD" * 500_000 + "é"
    assert estimate_token_count(blob) == math.ceil(len(blob) / 3)  # French class: ceil(n / 3)
