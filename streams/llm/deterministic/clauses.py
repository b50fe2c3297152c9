"""Sentence tools of the offline Observer: split, strip filler, rewrite in the third person, compare.

Rules kept here (plain string rules, no language model):

* A message splits into sentences at ``. ! ?`` before a capital or digit, and before list items
  ``1)``; a sentence that mixes a statement and a trailing question ("X is allergic, is that a
  problem?") splits into the two.
* Greetings, thanks and bare acknowledgements at the start of a sentence are removed; what is left
  with fewer than two content words (or a reaction like "Prado sounds amazing") is filler.
* The user's "I / my / we" become "they / their" (the note says who spoke); the assistant's "you"
  becomes "user".
* Every rule is a pure function of its strings, and the model meets the same sentences again (the
  extracted values re-read the batch, the previous observations come back each call): remembered.
* Words are compared by a short stem (first five letters), so "partition" and "partitions" match;
  *specifics* are numbers, codes and capitalised names after the first word — what a note must
  never lose.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, TypeVar

STOPWORDS = frozenset("""
a about above after again against all almost already also am an and any are as at be because been
before being below between both but by can could did do does doing done down during each either else
even ever every few for from further had has have having he her here hers him his how i if in into is
it its itself just let lets me might more most much must my myself no nor not now of off on once only
or other our ours out over own please probably quite rather really same shall she should so some such
than that the their theirs them then there these they this those though through to too under until up
us very was we were what when where which while who whom why will with would yes yet you your yours
okay ok sure yeah hi hello hey thanks thank great perfect good nice wonderful awesome cool noted it's that's
there's i'm i'll i've i'd we're let's
""".split())

_LEAD = re.compile(
    r"^(?:(?:hi|hello|hey|yes|yeah|yep|ok|okay|sure|great|perfect|good|nice|wonderful|awesome|excellent|"
    r"cool|noted|got it|updated|thanks|thank you|also|so|well|anyway|please|quick update on|"
    r"switching topics for a bit|back to)\b[\s,:!.\-—]*)+",
    re.IGNORECASE,
)
_REACTION = re.compile(
    r"^[\w\s'-]{0,40}\b(?:sounds|looks|seems) (?:perfect|great|amazing|good|lovely|fine|nice|wonderful|ideal)\b",
    re.IGNORECASE,
)
# Spaces after ". ! ?" before a capital or digit, or a space before "1)": the pattern starts with the
# space both need, so the engine skips to spaces (less than half the scan of the lookbehind-first
# (?<=[.!?])\s+(?=…)|\s(?=…), which split the same).
_SPLIT = re.compile(r"\s(?:(?<=[.!?]\s)\s*(?=[A-Z0-9\"'(])|(?=\d\)\s))")
_TRAILING_QUESTION = re.compile(
    r"^(?P<statement>[^?]{12,}?),\s+(?P<question>(?:is|are|can|could|would|will|do|does|should|what|how|"
    r"which|where|when)\b[^?]*\?)$",
    re.IGNORECASE,
)
_WORD = re.compile(r"[\w'’-]+")
_NOT_WORD = {c: " " for c in range(128) if not re.fullmatch(_WORD, chr(c))}  # ASCII outside _WORD
# Each starts with a character class and tests the ``\b`` before it in a look-behind, not with
# ``\b``: the engine then skips to the class's characters instead of trying every place (half
# the scan; the matches are those of ``\b\d…``, ``\b[A-Z]{2,}…``, ``\b[A-ZÀ-Ý]…``).
_NUMBER = re.compile(r"\d(?<=\b\d)[\d,.:]*[a-z]*\b", re.IGNORECASE)
CODE = re.compile(r"[A-Z](?<=\b[A-Z])[A-Z]+[\w]*-?\d[\w-]*\b")
_NAME = re.compile(r"[A-ZÀ-Ý](?<=\b[A-ZÀ-Ý])[\w'’-]+")

T = TypeVar("T")

_USER_START = (
    (re.compile(r"^I'm\b|^I am\b"), "is"), (re.compile(r"^I've\b"), "has"), (re.compile(r"^I'll\b"), "will"),
    (re.compile(r"^I'd\b"), "would"), (re.compile(r"^I\b"), ""), (re.compile(r"^let'?s go with\b", re.I), "chose"),
    (re.compile(r"^let'?s\b", re.I), "will"), (re.compile(r"^(?:can|could|would|will) you (?:please )?", re.I),
                                                 "asked to "),
)
_USER_INNER = (
    (r"\bI'm\b", "they're"), (r"\bI am\b", "they are"), (r"\bI've\b", "they've"), (r"\bI'll\b", "they'll"),
    (r"\bI'd\b", "they'd"), (r"\bI\b", "they"), (r"\bmy\b", "their"), (r"\bme\b", "them"), (r"\bmine\b", "theirs"),
    (r"\b[Ww]e're\b", "they're"), (r"\b[Ww]e'll\b", "they'll"), (r"\b[Ww]e\b", "they"), (r"\b[Oo]ur\b", "their"),
    (r"\bus\b", "them"),
)
_ASSISTANT_START = ((re.compile(r"^I'd\b"), "would"), (re.compile(r"^I'll\b"), "will"), (re.compile(r"^I can\b"), "can"),
                    (re.compile(r"^I\b"), ""))
_ASSISTANT_INNER = ((r"\byou're\b", "user is"), (r"\b[Yy]ou\b", "user"), (r"\b[Yy]our\b", "user's"))


def _in_one_pass(rules: tuple[tuple[str, str], ...]) -> Callable[[str], str]:
    """The rules' substitutions, one after the other, made in one scan: each pattern is ``\\b``
    and a whole word (or two) that starts and ends with a word character, and none is a group, so no
    two matches start at different places and overlap, and no replacement contains a later rule's
    word; where several match at one place, the alternation takes the first rule, as the rules in
    turn did. A look-ahead for the words' first letters lets the scan pass every other place at
    once (14 patterns tried at each place cost ~10× the scan)."""
    firsts = "".join(rule[3:rule.index("]")] if rule.startswith("\\b[") else re.escape(rule[2]) for rule, _ in rules)
    pattern = re.compile(rf"\b(?=[{firsts}])(?:" + "|".join(f"({rule})" for rule, _ in rules) + ")")
    replacements = [replacement for _, replacement in rules]
    return functools.partial(pattern.sub, lambda found: replacements[found.lastindex - 1])


_INNER = {"user": _in_one_pass(_USER_INNER), "assistant": _in_one_pass(_ASSISTANT_INNER)}


def one_of(*alternatives: str, capture: bool = False) -> str:
    """``(?:a|b|…)`` (a group with ``capture``) behind a look-ahead for the alternatives' first
    characters: the engine passes each place no alternative can start at with one test instead of
    trying every alternative there (about twice as fast on a 1 kB sentence). Each alternative starts
    with a literal character; under IGNORECASE the look-ahead's class folds case as the alternatives
    do, so the matches are the same."""
    if any(a[:1] in ("", *"\\([.^$|?*+{") for a in alternatives):
        raise ValueError("each alternative must start with a literal character")
    firsts = "".join(sorted({re.escape(a[0]) for a in alternatives}))
    return f"(?=[{firsts}])" + ("(" if capture else "(?:") + "|".join(alternatives) + ")"


SHORT_TEXT = 4_000  # characters
LONG_TEXTS_KEPT = 64


def remembered(maxsize: int) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """``functools.lru_cache`` for a pure function of a text (and small arguments), with room for
    ``maxsize`` short texts but only :data:`LONG_TEXTS_KEPT` long ones (a whole previous log, up to
    a message's megabyte): the cache's memory stays bounded."""
    def wrap(fn: Callable[..., T]) -> Callable[..., T]:
        short, long = functools.lru_cache(maxsize=maxsize)(fn), functools.lru_cache(maxsize=LONG_TEXTS_KEPT)(fn)

        @functools.wraps(fn)
        def call(text: str, *rest: Any) -> T:
            return (short if len(text) <= SHORT_TEXT else long)(text, *rest)
        return call
    return wrap


@remembered(8_192)
def sentences(text: str) -> tuple[str, ...]:
    flat = " ".join(text.split())
    out: list[str] = []
    pieces: list[str] = []
    for piece in _SPLIT.split(flat):  # "1." and "Shortlist (5 nights):" belong to what follows
        if pieces and (pieces[-1].endswith(".") and re.fullmatch(r"\d+\.|.*:\s\d+\.", pieces[-1])
                       or pieces[-1].endswith(":")):
            pieces[-1] = f"{pieces[-1]} {piece}"
        else:
            pieces.append(piece)
    for piece in pieces:
        piece = piece.strip()
        found = _TRAILING_QUESTION.match(piece) if piece.endswith("?") else None  # (no newline in piece)
        out.extend([found["statement"].strip() + ".", found["question"]] if found else [piece] if piece else [])
    return tuple(out)


@remembered(32_768)
def strip_filler(sentence: str) -> str:
    """The sentence without its leading greeting or acknowledgement; '' when nothing is left."""
    rest = _LEAD.sub("", sentence).strip()
    if _REACTION.match(rest) or len(content_words(rest)) < 2 and not specifics(rest):
        return ""
    return rest[:1].upper() + rest[1:] if rest else ""


@remembered(32_768)
def content_words(text: str) -> frozenset[str]:
    """Remembered per text: the model sees the same previous observations and messages call after
    call (a pure function, so a cache only saves the work)."""
    stems = set(map(_content_stem, words(text)))
    stems.discard(None)
    return frozenset(stems)


def words(text: str) -> set[str]:
    """The distinct lower-case words (runs of ``[\\w'’-]``); an ASCII text is cut at its other
    characters by ``translate`` and ``split``, twice as fast as ``findall`` (\\w is str.isalnum()
    and ``_``, every character ``split`` cuts at is outside it)."""
    lower = text.lower()
    if lower.isascii():
        return set(lower.translate(_NOT_WORD).split())
    return set(_WORD.findall(lower))


@functools.lru_cache(maxsize=65_536)  # a word
def _content_stem(word: str) -> str | None:
    """The word's stem, or None for a stopword or a short word that is not a number."""
    return stem(word) if word not in STOPWORDS and (len(word) > 2 or word.isdigit()) else None


@functools.lru_cache(maxsize=65_536)  # a word
def stem(word: str) -> str:
    word = word.strip("'’-")
    return word[:5] if len(word) > 5 and not any(c.isdigit() for c in word) else word


@remembered(32_768)
def specifics(text: str) -> frozenset[str]:
    """Numbers, codes and capitalised names; the first word is capitalised anyway, so it is not a name."""
    rest = text.split(" ", 1)[1] if " " in text else ""
    if not _may_have_capitals(text):  # no name and no code can start: two scans saved
        return frozenset(_NUMBER.findall(text))
    names = {n for n in _NAME.findall(rest) if n.lower() not in STOPWORDS}
    return frozenset(_NUMBER.findall(text)) | frozenset(CODE.findall(text)) | names


def content_words_by_line(text: str, lines: list[str] | None = None) -> frozenset[str]:
    """:func:`content_words` of ``text``, from its lines' (each remembered): a whole previous log, new
    at every call, is mostly lines seen before (a word never spans a newline). ``lines``: the
    text's, when the caller has split it already."""
    return frozenset().union(*map(content_words, text.split("\n") if lines is None else lines))


def lower_specifics_by_line(text: str, lines: list[str] | None = None) -> frozenset[str]:
    """:func:`specifics` of ``text``, lower-cased, from its lines' (each remembered): numbers and codes
    line by line (none spans a newline), names only in what follows the text's first space, as
    :func:`specifics` finds them. ``lines``: the text's, when the caller has split it already."""
    parts = list(map(_line_numbers_and_codes, text.split("\n") if lines is None else lines))
    _, space, rest = text.partition(" ")
    if space:
        parts.extend(map(_line_names, rest.split("\n")))
    return frozenset().union(*parts)


@remembered(65_536)
def _line_numbers_and_codes(line: str) -> frozenset[str]:
    found = _NUMBER.findall(line)
    if _may_have_capitals(line):
        found += CODE.findall(line)
    return frozenset(s.lower() for s in found)


@remembered(65_536)
def _line_names(line: str) -> frozenset[str]:
    if not _may_have_capitals(line):
        return frozenset()
    return frozenset(lower for name in _NAME.findall(line) if (lower := name.lower()) not in STOPWORDS)


def _may_have_capitals(text: str) -> bool:
    """False only when ``text`` holds no letter of ``[A-ZÀ-Ý]``, which a name and a code start
    with: each of them but × (U+00D7) is changed by ``lower()`` (a cheap pass, where a character
    class search is not)."""
    return text != text.lower() or "\u00d7" in text


@remembered(32_768)
def third_person(sentence: str, role: str) -> tuple[str, bool]:
    """(rewritten sentence, whether it now starts with a verb for "User …"/"Assistant …")."""
    starts = _USER_START if role == "user" else _ASSISTANT_START
    text, verb_first = sentence, False
    for pattern, replacement in starts:
        if pattern.search(text):
            text, verb_first = pattern.sub(replacement, text, count=1).strip(), True
            break
    text = _INNER["user" if role == "user" else "assistant"](text)
    if not verb_first and role == "user" and re.match(r"^[A-Z][a-z]+ed\b", text) and not _NAME.fullmatch(text):
        text, verb_first = text[0].lower() + text[1:], True  # "Booked Memmo!" -> "User booked Memmo"
    return text, verb_first


_FILLERS = one_of("the", "a", "an", "about", "around", "roughly", "usually", "comfortably", "really", "just", "very",
                  "please", "so far", "at least", "easy", "excellent", "user can", "which has")
_FILLER_WORDS = re.compile(rf"\b{_FILLERS}\s+", re.IGNORECASE)


@remembered(32_768)
def compact(text: str) -> str:
    """Telegraphic wording: articles, hedges and padding words dropped; the facts stay (remembered:
    the assistant's sentences come back call after call, as the user's do)."""
    return re.sub(r"\s{2,}", " ", _FILLER_WORDS.sub("", text)).strip()


_SHORTHAND = re.compile(
    r"\b(?:they're|they've|they'll|they|their|he|she|it|is|are|was|were|be|been|have|has|had|will|would|"
    r"should|must|that|which|who|too|already|now|so|and|but|then|also|there|here)\b\s*",
    re.IGNORECASE)


def telegraph(text: str) -> str:
    """Note-taking shorthand: :func:`compact`, then pronouns and auxiliaries dropped; negations stay."""
    return re.sub(r"\s+([,;:])", r"\1", re.sub(r"\s{2,}", " ", _SHORTHAND.sub("", compact(text)))).strip(" ,")


def tidy(text: str) -> str:
    """A clause as a note: no end punctuation, no doubled spaces."""
    return re.sub(r"\s{2,}", " ", text).strip().rstrip(".!").strip()
