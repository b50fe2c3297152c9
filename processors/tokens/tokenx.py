"""A Python port of the ``tokenx`` 1.x estimator that Mastra uses for every local token count.

Why port an estimator instead of using a real tokenizer: Mastra's thresholds (30k/40k tokens) were
tuned against these numbers, so reproducing them keeps our observe/reflect decisions where Mastra
puts them. The rules, applied per segment after splitting on whitespace and punctuation runs:

* whitespace counts 0, or 1 when it carries structure (a newline followed by more whitespace);
* a segment containing a letter of a known language family costs ``ceil(code points / ratio)``;
* CJK/Hangul segments cost 1 per character, kana ``ceil(n / 1.35)``;
* digit runs ``ceil(len / 3)``; anything of length <= 3 costs 1; punctuation runs
  ``ceil(len / 2)``; other words ``ceil(len / 6)``.

Lengths are JavaScript lengths (UTF-16 code units) except where tokenx counts code points, and the
character classes below are the exact sets JavaScript's regexes match (``\\s``, ``\\d`` and
case-insensitive classes differ from Python's), so the counts equal tokenx's on the same string.
"""

from __future__ import annotations

import math
import re

import regex

from processors.tokens.js_compat import JS_WHITESPACE, utf16_length

# tokenx's punctuation class is every ASCII punctuation mark except the apostrophe.
_PUNCT = "!-&(-/:-@\\[-`{-~"
_SPACE = f"[{JS_WHITESPACE}]"
_WORD = f"[^{JS_WHITESPACE}{_PUNCT}]"  # a word is a maximal run of these
_NON_ASCII_WORD_CHAR = f"[^\\x00-\\x7f{JS_WHITESPACE}]"

# Counting matches lets the regex engine do the per-segment work (see estimate_token_count).
# Every pattern is anchored at a run's start with a lookbehind so that scans stay linear.
_WORD_CHUNKS = re.compile(f"{_WORD}{{1,6}}")
_DIGIT_WORDS = re.compile(f"(?<!{_WORD})[0-9]+(?!{_WORD})")
_NON_ASCII_WORDS = re.compile(f"(?<!{_WORD}){_WORD}*{_NON_ASCII_WORD_CHAR}{_WORD}*")
_PUNCT_PAIRS = re.compile(f"[{_PUNCT}]{{1,2}}")
_PUNCT_TRIPLES = re.compile(f"(?<![{_PUNCT}])[{_PUNCT}]{{3}}(?![{_PUNCT}])")
_STRUCTURED_SPACES = re.compile(f"(?<!{_SPACE}){_SPACE}*\n{_SPACE}")

# The language classes as JavaScript matches them with the ``i`` flag (upper-case forms and the
# odd case-folding relatives such as U+00B5 for Greek and U+1C80.. for Cyrillic included).
# Order matters: the first class found anywhere in the segment decides the ratio.
_LANGUAGE_RATIOS: tuple[tuple[re.Pattern[str], float], ...] = (
    (re.compile("[\xc4\xd6\xdc\xdf\xe4\xf6\xfc\u1e9e]"), 2.6),  # German
    (
        re.compile(
            "[\xc0-\xc2\xc6-\xcb\xcd-\xcf\xd1\xd3\xd4\xd9-\xdc\xe0-\xe2\xe6-\xeb\xed-\xef"
            "\xf1\xf3\xf4\xf9-\xfc\xff\u0152\u0153\u0178]"
        ),
        3.0,
    ),  # French / Spanish
    (
        re.compile(
            "[\xd3\xda\xdd\xf3\xfa\xfd\u0104-\u0107\u010c-\u010f\u0118-\u011b\u0141-\u0144"
            "\u0147\u0148\u0158-\u015b\u0160\u0161\u0164\u0165\u016e\u016f\u0179-\u017e]"
        ),
        2.5,
    ),  # Polish / Czech
    (re.compile("[\u0401\u0410-\u044f\u0451\u1c80-\u1c86]"), 4.0),  # Cyrillic
    (
        re.compile(
            "[\xb5\u0345\u0386\u0388-\u038a\u038c\u038e\u038f\u0391-\u03a1\u03a3-\u03ce"
            "\u03d0\u03d1\u03d5\u03d6\u03f0\u03f1\u03f5\u1fbe]"
        ),
        2.75,
    ),  # Greek
)
# A segment made only of emoji (ZWJ sequences, skin tones, keycaps...): tokenx's one
# Unicode-property rule, hence the ``regex`` module (Unicode tables may trail Node's slightly).
_EMOJI_ONLY = regex.compile(r"\p{Extended_Pictographic}[\p{Extended_Pictographic}\p{Emoji_Component}]*")
_EMOJI_CHARS_PER_TOKEN = 0.75
_CJK = re.compile(
    "[\u1100-\u11ff\u2e80-\u2eff\u3000-\u30ff\u3130-\u318f\u31c0-\u31ef\u3200-\u4dbf"
    "\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uff00-\uffef]"
)
_KANA_FIRST, _KANA_LAST = 0x3040, 0x30FF
_KANA_CHARS_PER_TOKEN = 1.35
_DEFAULT_CHARS_PER_TOKEN = 6
_SHORT_SEGMENT = 3


def estimate_token_count(text: str) -> int:
    """tokenx's ``estimateTokenCount``: the sum of the per-segment estimates (0 for "").

    Walking segments in Python costs ~250 us for a 200-token message; counting regex matches
    costs a tenth of that. The sum is regrouped, not changed:

    * most words cost ``ceil(len / 6)`` (short ones 1 = ceil(len / 6) too), which is the number
      of 1-6 character chunks in them; digit-only and non-ASCII words are then corrected to
      their own rule one by one (they are few in prose, code and JSON);
    * a punctuation run costs ``ceil(len / 2)`` pairs, except that a run of exactly 3 costs 1;
    * a whitespace run costs 1 when a newline in it is followed by more whitespace.
    """
    if not text:
        return 0
    total = len(_WORD_CHUNKS.findall(text))
    for digits in _DIGIT_WORDS.findall(text):
        total += -(-len(digits) // 3) - -(-len(digits) // _DEFAULT_CHARS_PER_TOKEN)
    if not text.isascii():
        for word in _NON_ASCII_WORDS.findall(text):
            total += _word_tokens(word) - -(-len(word) // _DEFAULT_CHARS_PER_TOKEN)
    total += len(_PUNCT_PAIRS.findall(text)) - len(_PUNCT_TRIPLES.findall(text))
    return total + len(_STRUCTURED_SPACES.findall(text))


def _word_tokens(word: str) -> int:
    """tokenx's rule for a word holding a non-ASCII character (digit-only words cannot)."""
    for pattern, ratio in _LANGUAGE_RATIOS:
        if pattern.search(word):
            return math.ceil(len(word) / ratio)
    if _EMOJI_ONLY.fullmatch(word):
        return math.ceil(len(word) / _EMOJI_CHARS_PER_TOKEN)
    if _CJK.search(word):
        return _cjk_tokens(word)
    length = utf16_length(word)
    return 1 if length <= _SHORT_SEGMENT else -(-length // _DEFAULT_CHARS_PER_TOKEN)


def _cjk_tokens(word: str) -> int:
    kana = sum(1 for char in word if _KANA_FIRST <= ord(char) <= _KANA_LAST)
    return (len(word) - kana) + math.ceil(kana / _KANA_CHARS_PER_TOKEN)

