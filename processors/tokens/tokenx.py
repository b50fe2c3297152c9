"""A Python port of ``tokenx`` 1.3.0's ``estimateTokenCount``, the estimator ``@mastra/memory`` 1.31.0
bundles for every local token count (spec §9.1; later tokenx releases changed the rules).

Why port an estimator instead of using a real tokenizer: Mastra's thresholds (30k/40k tokens) were
tuned against these numbers, so reproducing them keeps our observe/reflect decisions where Mastra
puts them. tokenx 1.3.0 cuts the text into maximal runs of three kinds and prices each run:

* whitespace (JavaScript's ``\\s``): 0, whatever it holds (newlines and indentation included);
* punctuation, one of the 30 ASCII marks ``. , ! ? ; ( ) { } [ ] < > : / \\ | @ # $ % ^ & * + = ` ~ _ -``
  (not the quotes ``"`` and ``'``, which belong to words): 1 up to 3 characters, else
  ``ceil(len / 2)``;
* a word (anything else), checked in this order:
  1. holding a CJK character (the ranges of ``_CJK``: ideographs, katakana, Hangul, fullwidth forms,
     CJK symbols — but not hiragana): 1 per code point;
  2. only ASCII digits: 1, however long (``.`` and ``,`` split numbers, so "3.14" is 3 runs);
  3. at most 3 characters: 1;
  4. holding a German/French/Spanish letter: ``ceil(len / 3)``; else a Polish/Czech letter:
     ``ceil(len / 3.5)``; else ``ceil(len / 6)``.

Lengths are JavaScript lengths (UTF-16 code units: an emoji counts 2) except in rule 1, and the
character sets are exactly those JavaScript's regexes match there (``\\s``, ``\\d`` and the
case-insensitive letter classes differ from Python's), so the counts equal tokenx's on any string.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

from processors.tokens.js_compat import JS_WHITESPACE, utf16_length

_PUNCT_CHARS = ".,!?;(){}[]<>:/\\|@#$%^&*+=`~_-"
_NON_ASCII_SPACES = "".join(char for char in JS_WHITESPACE if not char.isascii())
_NON_ASCII_SPACE = re.compile(f"[{_NON_ASCII_SPACES}]")

# One class letter per ASCII character: w(ord), d(igit), p(unctuation), s(pace).
_CLASSES = bytes(
    ord("s") if chr(code) in JS_WHITESPACE
    else ord("p") if chr(code) in _PUNCT_CHARS
    else ord("d") if chr(code).isdigit()
    else ord("w")
    for code in range(128)
) + b"w" * 128
# For ``text.encode("ascii", "replace")``, where every non-ASCII character became one "?": a word
# character (non-ASCII spaces are replaced first); the text's own question marks are set back to "p".
_MARKED_CLASSES = bytes(ord("w") if code == ord("?") else cls for code, cls in enumerate(_CLASSES))
_PUNCT = ord("p")
_WORDS_ONLY = bytes.maketrans(b"wdps", b"wwxx")
_PUNCT_ONLY = bytes.maketrans(b"wdps", b"oopo")
# Digit-only words longer than 6: the only ones whose price (1) differs from ceil(len / 6).
_LONG_DIGIT_WORDS = re.compile(rb"(?<![wd])d{7,}(?![wd])")

# The letter classes as JavaScript matches them with the ``i`` flag (upper-case forms included).
# tokenx tries German, then French/Spanish (both 3 characters a token), then Polish/Czech (3.5).
_LATIN_3 = re.compile(
    "[\xc0-\xc2\xc4\xc6-\xcb\xcd-\xcf\xd1\xd3\xd4\xd6\xd9-\xdc\xdf\xe0-\xe2\xe4\xe6-\xeb\xed-\xef"
    "\xf1\xf3\xf4\xf6\xf9-\xfc\xff\u0152\u0153\u0178\u1e9e]"
)
_LATIN_3_5 = re.compile(
    "[\xd3\xda\xdd\xf3\xfa\xfd\u0104-\u0107\u010c-\u010f\u0118-\u011b\u0141-\u0144"
    "\u0147\u0148\u0158-\u015b\u0160\u0161\u0164\u0165\u016e\u016f\u0179-\u017e]"
)
_CJK = re.compile(
    "[\u1100-\u11ff\u2e80-\u2eff\u3000-\u303f\u30a0-\u30ff\u3130-\u318f\u31c0-\u31ef\u3200-\u4dbf"
    "\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uff00-\uffef]"
)
_DEFAULT_CHARS_PER_TOKEN = 6
_SHORT_SEGMENT = 3


def estimate_token_count(text: str) -> int:
    """tokenx 1.3.0's ``estimateTokenCount``: the sum of the per-run prices (0 for "").

    Walking the runs in Python costs ~250 us for a 200-token message; this costs a fraction. The
    text is mapped to one class letter per character and the sum is regrouped, not changed, into
    counts that ``bytes.count`` can do: every word is first priced ``ceil(len / 6)``, then the few
    words that price otherwise (non-ASCII, or long digit-only) are corrected one by one.
    """
    if not text:
        return 0
    if text.isascii():
        classes = text.encode().translate(_CLASSES)
        total = 0
    else:
        marked = text.encode("ascii", "replace")  # one byte per character, a non-ASCII one "?"
        classes = marked.translate(_MARKED_CLASSES)
        if "?" in text:
            classes = _question_marks(text, classes)
        words = _non_ascii_words(text, marked, classes)
        held = "".join(words)  # every non-ASCII character is in one of them
        if any(char in held for char in _NON_ASCII_SPACES):
            return estimate_token_count(_NON_ASCII_SPACE.sub(" ", text))  # spaces, not word characters
        total = sum(_word_tokens(word) - _ceil6(len(word)) for word in words)
    total += _word_chunks(classes) + _digit_correction(classes)
    return total + _punct_tokens(classes)


def _question_marks(text: str, classes: bytes) -> bytes:
    """The classes with the text's own question marks as punctuation again."""
    fixed = bytearray(classes)
    at = text.find("?")
    while at != -1:
        fixed[at] = _PUNCT
        at = text.find("?", at + 1)
    return bytes(fixed)


def _non_ascii_words(text: str, marked: bytes, classes: bytes) -> list[str]:
    """The words holding a non-ASCII character, found from those characters outwards: one step per
    such word (and per question mark of the text), not per character."""
    boundaries = classes.translate(_WORDS_ONLY)  # "x" wherever a word cannot be
    words = []
    at = marked.find(b"?")
    while at != -1:
        if classes[at] == _PUNCT:  # the text's own question mark
            at = marked.find(b"?", at + 1)
            continue
        start = boundaries.rfind(b"x", 0, at) + 1
        end = boundaries.find(b"x", at)
        end = len(boundaries) if end == -1 else end
        words.append(text[start:end])
        at = marked.find(b"?", end)  # the word's other non-ASCII characters are taken
    return words


def _word_chunks(classes: bytes) -> int:
    """Σ ceil(len / 6) over words (also 1 for short ones): pad each word by 5, count 6-blocks."""
    words = classes.translate(_WORDS_ONLY) + b"x"
    return words.replace(b"wx", b"wwwwwwx").count(b"wwwwww")


def _digit_correction(classes: bytes) -> int:
    """Digit-only words cost 1, not the ceil(len / 6) counted for every word."""
    if b"ddddddd" not in classes:
        return 0
    return sum(1 - _ceil6(len(run)) for run in _LONG_DIGIT_WORDS.findall(classes))


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


def _ceil6(length: int) -> int:
    return -(-length // _DEFAULT_CHARS_PER_TOKEN)


@lru_cache(maxsize=4096)
def _word_tokens(word: str) -> int:
    """tokenx's price of a word holding a non-ASCII character (digit-only words cannot).

    Memoised: such words ("it’s", "—", "naïve") recur across messages and each costs several
    regex probes.
    """
    if _CJK.search(word):
        return len(word)  # code points, as ``Array.from(word).length``
    length = utf16_length(word)
    if length <= _SHORT_SEGMENT:
        return 1
    if _LATIN_3.search(word):
        return math.ceil(length / 3)
    if _LATIN_3_5.search(word):
        return math.ceil(length / 3.5)
    return -(-length // _DEFAULT_CHARS_PER_TOKEN)
