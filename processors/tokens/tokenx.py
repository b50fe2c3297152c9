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
from functools import lru_cache

import regex

from processors.tokens.js_compat import JS_WHITESPACE, utf16_length

# tokenx's punctuation class is every ASCII punctuation mark except the apostrophe.
_PUNCT_CHARS = "!\"#$%&()*+,-./:;<=>?@[\\]^_`{|}~"
_NON_ASCII_SPACES = "".join(char for char in JS_WHITESPACE if not char.isascii())
_NON_ASCII_SPACE = re.compile(f"[{_NON_ASCII_SPACES}]")
_NON_ASCII = re.compile("[^\\x00-\\x7f]")
_NON_ASCII_WORD_RUN = re.compile(f"[^\\x00-\\x7f{JS_WHITESPACE}]+")

# One class letter per character: w(ord), d(igit), p(unctuation), n(ewline), s(pace).
_CLASSES = bytes(
    ord("n") if code == 0x0A
    else ord("s") if chr(code) in JS_WHITESPACE
    else ord("p") if chr(code) in _PUNCT_CHARS
    else ord("d") if chr(code).isdigit()
    else ord("w")
    for code in range(128)
) + b"w" * 128
_WORDS_ONLY = bytes.maketrans(b"wdpns", b"wwxxx")
_PUNCT_ONLY = bytes.maketrans(b"wdpns", b"oopoo")
_SPACES_ONLY = bytes.maketrans(b"wdpns", b"xxxns")
_DIGIT_WORDS = re.compile(rb"(?<![wd])d+(?![wd])")

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

    Walking the segments in Python costs ~250 us for a 200-token message; this costs ~40 us. The
    text is mapped to one class letter per character and the sum is regrouped, not changed, into
    counts that ``bytes.count`` can do (see the helpers). Words with a non-ASCII character, and
    digit-only words, are then corrected to their own rule one by one: they are few.
    """
    if not text:
        return 0
    if text.isascii():
        classes = text.encode().translate(_CLASSES)
        total = 0
    else:
        if any(char in text for char in _NON_ASCII_SPACES):
            text = _NON_ASCII_SPACE.sub(" ", text)
        classes = _NON_ASCII.sub("w", text).encode().translate(_CLASSES)
        words = _non_ascii_words(text, classes)
        total = sum(_word_tokens(word) - _ceil6(len(word)) for word in words)
    total += _word_chunks(classes) + _digit_extra(classes)
    return total + _punct_tokens(classes) + _structured_spaces(classes)


def _non_ascii_words(text: str, classes: bytes) -> list[str]:
    """The words holding a non-ASCII character, found from those characters outwards."""
    boundaries = classes.translate(_WORDS_ONLY)  # "x" wherever a word cannot be
    words = []
    end = 0
    for run in _NON_ASCII_WORD_RUN.finditer(text):
        if run.start() < end:
            continue  # another non-ASCII run of the word already taken
        start = boundaries.rfind(b"x", 0, run.start()) + 1
        end = boundaries.find(b"x", run.end())
        end = len(boundaries) if end == -1 else end
        words.append(text[start:end])
    return words


def _word_chunks(classes: bytes) -> int:
    """Σ ceil(len / 6) over words (also 1 for short ones): pad each word by 5, count 6-blocks."""
    words = classes.translate(_WORDS_ONLY) + b"x"
    return words.replace(b"wx", b"wwwwwwx").count(b"wwwwww")


def _digit_extra(classes: bytes) -> int:
    """Digit-only words cost ceil(len / 3), not the ceil(len / 6) counted for every word."""
    if b"d" not in classes:
        return 0
    return sum(-(-len(run) // 3) - _ceil6(len(run)) for run in _DIGIT_WORDS.findall(classes))


def _punct_tokens(classes: bytes) -> int:
    """A punctuation run costs ceil(len / 2), except that a run of exactly 3 costs 1."""
    if b"p" not in classes:
        return 0
    runs = classes.translate(_PUNCT_ONLY) + b"o"
    pairs = runs.replace(b"po", b"ppo").count(b"pp")
    if b"ppp" not in runs:
        return pairs
    # Doubling the separators gives every run its own pair of borders to match against.
    return pairs - (b"o" + runs).replace(b"o", b"oo").count(b"opppo")


def _structured_spaces(classes: bytes) -> int:
    """Whitespace runs in which a newline is followed by more whitespace cost 1 each."""
    if b"n" not in classes:
        return 0
    runs = classes.translate(_SPACES_ONLY).replace(b"ns", b"Q").replace(b"nn", b"Q")
    return (b"x" + runs.translate(None, b"ns")).count(b"xQ")


def _ceil6(length: int) -> int:
    return -(-length // _DEFAULT_CHARS_PER_TOKEN)


@lru_cache(maxsize=4096)
def _word_tokens(word: str) -> int:
    """tokenx's rule for a word holding a non-ASCII character (digit-only words cannot).

    Memoised: such words ("it’s", "—", "naïve") recur across messages and each costs several
    regex probes.
    """
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

