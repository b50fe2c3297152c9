"""The offline Observer: terse, dated, prioritised notes derived from the messages by plain rules.

It is not a language model; it follows the Observer's instructions (spec §5.3) as far as string
rules can, and the same prompt always yields the same answer.

* Kept: what the user stated (🔴) — decisions and changes of mind always —, finished work the user reports (✅: booked, sent, approved,
  cancelled …), the user's questions (🟡), and assistant sentences that bring new specifics —
  numbers, codes, names — (🟡); reasoning and attachments are 🟢.
* Dropped: greetings, thanks, acknowledgements, reactions, the assistant's offers and questions,
  and restatements (a sentence whose content words and specifics were all seen before: in the
  previous observations, the notes so far, or what the user said earlier in the batch).
* A relative date is resolved against the message's day and ends its note ("(meaning …)").
* A change of mind names what it replaces: "switched to B" becomes "switched from A to B" when A
  was chosen or booked before; a cancellation of A carries A's reference codes.
* Clauses of one message with the same priority share one note, joined by "; ".
* What a sentence is and how it reads (:func:`reading`, :func:`wording`) depend on the sentence
  alone and are remembered; only what depends on the memory (is it new, what a change replaces)
  is worked out again each call. What the memory learns from a text is put together from its
  lines' words and specifics, each line's remembered: the previous log is new text at every call,
  but mostly the lines of the call before.
* A done, decided or chosen pattern is scanned only where one of its words is (processors/text/needles.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

from processors.text.needles import literal_starts, may_match
from streams.llm.deterministic.clauses import (
    CODE,
    compact,
    content_words,
    content_words_by_line,
    lower_specifics_by_line,
    one_of,
    remembered,
    sentences,
    specifics,
    strip_filler,
    third_person,
    tidy,
)
from streams.llm.deterministic.hints import sections
from streams.llm.deterministic.history import Entry, parse_history, split_threads
from streams.llm.deterministic.relative_dates import fmt, resolve

_DONE_WORDS = ("booked", "done", "sent", "approved", "cancell?ed", "received", "finished", "completed", "paid",
               "bought", "fixed", "shipped", "merged", "submitted", "delivered", "signed", "reserved", "ordered",
               "confirmed")
_DONE = re.compile(rf"\b{one_of(*_DONE_WORDS)}\b", re.IGNORECASE)
_NOT_DONE_WORDS = one_of("will", "'ll", "need to", "going to", "want to", "should", "if", "not", "haven't", "didn't")
_NOT_DONE = re.compile(rf"\b{_NOT_DONE_WORDS}\b|\?$", re.IGNORECASE)
_CHOSE_WORDS = ("chose", "booked", "book", "go with", "going with", "picked", "decided on", "reserved", "stay at")
_CHOSE = re.compile(rf"\b{one_of(*_CHOSE_WORDS)}\s+(?:the |a )?([A-ZÀ-Ý][\w'’-]+)")
_SWITCH_WORDS = one_of("switch(?:ed|ing)?", "chang(?:ed|ing)", "mov(?:ed|ing)", capture=True)
_SWITCH_TO = re.compile(rf"\b{_SWITCH_WORDS} to ([A-ZÀ-Ý][\w'’-]+)")
_CANCEL = re.compile(r"\bcancell?ed ([A-ZÀ-Ý][\w'’-]+)")
_DECIDED = ("chose", "decided", "picked", "go with", r"switch\w*", "changed my mind", "instead of")
_DECISION = re.compile(rf"^let'?s go with\b|\b{one_of(*_DECIDED)}\b", re.IGNORECASE)
_DONE_NEEDLES = literal_starts(*_DONE_WORDS)  # words each pattern cannot match without: processors/text/needles.py
_CHOSE_NEEDLES = literal_starts(*_CHOSE_WORDS)
_DECISION_NEEDLES = literal_starts(*_DECIDED)  # "let's go with" holds "go with"
_RECAP = re.compile(r"^(?:noted|updated|got it|great|perfect|wonderful|design decisions so far|so far|to recap)\b"
                    r"[^:,]{0,20}[:,]", re.IGNORECASE)
ASSISTANT_CLAUSES = 2
ASSISTANT_CHARS = 140


@dataclass
class Memory:
    """What the Observer has seen so far: to spot restatements and to name what a change replaces."""

    words: set[str] = field(default_factory=set)
    facts: set[str] = field(default_factory=set)
    chosen: list[str] = field(default_factory=list)
    codes: dict[str, list[str]] = field(default_factory=dict)

    def learn(self, text: str, *, references: bool = False) -> None:
        """Codes belong to the names beside them in what the user said (``references``: a user
        message) or in a note about the user."""
        lines = text.split("\n")  # a whole previous log, once
        self.words |= content_words_by_line(text, lines)
        self.facts |= lower_specifics_by_line(text, lines)
        for line in lines:
            chosen, coded = _line_refs(line, references)
            self.chosen.extend(name for name in chosen if name not in self.chosen)
            for name, line_codes in coded:
                self.codes.setdefault(name, [])
                self.codes[name].extend(c for c in line_codes if c not in self.codes[name])

    def is_new(self, text: str) -> bool:
        fresh_facts = _lower_facts(text) - self.facts
        return bool(fresh_facts) or bool(content_words(text) - self.words)


@remembered(32_768)
def _lower_facts(text: str) -> frozenset[str]:
    return frozenset(s.lower() for s in specifics(text))


@remembered(65_536)
def _line_refs(line: str, references: bool) -> tuple[tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]]:
    """A line's chosen names, and the names its codes belong to (pure, so remembered: the previous
    observations come back line for line in every call)."""
    chosen = tuple(_CHOSE.findall(line)) if may_match(line, _CHOSE_NEEDLES) else ()
    line_codes = tuple(CODE.findall(line)) if references or "User" in line and re.search(r"\bUser\b", line) else ()
    names = re.findall(r"\b[A-ZÀ-Ý][a-zà-ÿ][\w'’-]*", line) if line_codes else []
    return chosen, tuple((name, line_codes) for name in names)


@dataclass
class Clause:
    marker: str
    text: str
    verb_first: bool
    resolved: str = ""


@dataclass(frozen=True)
class Reading:
    """What a sentence is, whatever the memory: the Observer meets the same sentences call after
    call (a batch's messages come back until observed), so this is remembered per sentence and role,
    and only the memory's part (is it new, what does a change replace) is redone."""

    rest: str  # the sentence without its filler
    question: bool
    done: bool
    decided: bool


@remembered(32_768)
def reading(sentence: str, role: str) -> Reading | None:
    """None for what is never noted: filler, and the assistant's offers, questions, pleasantries
    and recaps of what the user said."""
    question = sentence.endswith("?")
    if role == "assistant" and (question or _RECAP.match(sentence)
                                or sentence.endswith("!") and not re.search(r"\d", sentence)):
        return None
    rest = strip_filler(sentence)
    if not rest:
        return None
    done = (role == "user" and may_match(rest, _DONE_NEEDLES) and bool(_DONE.search(rest))
            and not _NOT_DONE.search(rest))
    return Reading(rest, question, done, may_match(rest, _DECISION_NEEDLES) and _DECISION.search(rest) is not None)


@dataclass(frozen=True)
class Wording:
    """How a noted sentence reads, whatever the memory (remembered as :class:`Reading` is)."""

    text: str  # in the third person, tidied
    verb_first: bool
    changes: bool  # names a switch or a cancellation: the memory may add what it replaces
    resolved: str  # the relative date's note, or ""


@remembered(32_768)
def wording(rest: str, role: str, day: date) -> Wording:
    text, verb_first = third_person(rest, role)
    text = tidy(text)
    found = resolve(rest, day)
    return Wording(text, verb_first, _names_a_change(text), found.note if found else "")


def _names_a_change(text: str) -> bool:
    """Whether :func:`_name_the_change` may have something to add: a switch ("… to B") or a
    cancellation, each looked for only where its words are."""
    return (" to " in text and _SWITCH_TO.search(text) is not None
            or "cancel" in text and _CANCEL.search(text) is not None)


def observe(system: str, task: str, history: str) -> str:
    asked = set(re.findall(r"^<([a-z][a-z0-9-]*)>$", system, re.M)) - {"observations", "thread",
                                                                         "observational-memory-instruction"}
    threads = split_threads(history)
    if threads is None:
        entries = parse_history(history)
        body = "\n".join(notes(entries, task))
        return "\n\n".join([f"<observations>\n{body}\n</observations>", *sections(entries, asked, task)])
    blocks = []
    for thread_id, text in threads.items():
        entries = parse_history(text)
        inner = "\n".join(["\n".join(notes(entries, task)), *sections(entries, asked, task)])
        blocks.append(f'<thread id="{thread_id}">\n{inner}\n</thread>')
    return "<observations>\n" + "\n".join(blocks) + "\n</observations>"


def notes(entries: list[Entry], previous: str) -> list[str]:
    memory = Memory()
    memory.learn(previous)
    out: list[str] = []
    day: date | None = None
    for entry in entries:
        lines = _entry_notes(entry, memory)
        if entry.title == "User":  # what the assistant wrote counts as seen only as far as it was noted
            memory.learn(entry.body, references=True)
        memory.learn("\n".join(lines))
        if not lines:
            continue
        if entry.day != day:
            day = entry.day
            out.append(f"Date: {fmt(day)}")
        out.extend(lines)
    return out


def _entry_notes(entry: Entry, memory: Memory) -> list[str]:
    title = entry.title
    if title in ("User", "Assistant"):
        return _group(entry, _clauses(entry, title.lower(), memory))
    if title.startswith("Tool Call "):
        return [f"* 🟡 ({entry.time}) Called {title[10:]} with {_clip(entry.body, 100)}"]
    if title.startswith("Tool Result "):
        return [f"  * -> {title[12:]} returned: {_clip(entry.body, 140)}"]
    if title.startswith(("Tool Error ", "Tool Denied ")):
        return [f"* 🟡 ({entry.time}) {title}: {_clip(entry.body, 140)}"]
    return [f"* 🟢 ({entry.time}) {title}: {_clip(entry.body, 120)}"]


def _clauses(entry: Entry, role: str, memory: Memory) -> list[Clause]:
    out: list[Clause] = []
    for sentence in sentences(entry.body):
        if role == "assistant" and len(out) >= ASSISTANT_CLAUSES:
            continue
        said = reading(sentence, role)
        if said is None:
            continue
        if not said.done and not said.decided and not memory.is_new(said.rest):
            continue  # a restatement
        if role == "assistant" and not (_lower_facts(said.rest) - memory.facts):
            continue  # the assistant's general remarks
        worded = wording(said.rest, role, entry.day)
        text, verb_first = worded.text, worded.verb_first
        if worded.changes:
            text = _name_the_change(text, entry.body, memory)
        if role == "assistant":
            text = _clip(compact(text), ASSISTANT_CHARS)
        if said.question and role == "user" and not text.startswith("asked"):
            text = f"asked: {text}"
            verb_first = True
        marker = "🟡" if role == "assistant" or said.question else "✅" if said.done else "🔴"
        if marker == "🔴" and out and out[-1].marker == "✅" and CODE.search(text):
            marker = "✅"  # "Booked X! Confirmation number ABC-1." is one finished thing
        out.append(Clause(marker, text, verb_first, worded.resolved))
    return out


def _name_the_change(text: str, message: str, memory: Memory) -> str:
    """'switched to B' -> 'switched from A to B' (A chosen earlier and named in the message);
    'cancelled A' -> 'cancelled A (CODE)' with the codes noted beside A before."""
    if (found := _SWITCH_TO.search(text)) is not None and " from " not in text:
        target = found[2]
        replaced = next((n for n in reversed(memory.chosen) if n != target and n in message), None)
        if replaced:
            text = text[: found.start()] + f"{found[1]} from {replaced} to {target}" + text[found.end():]
    if (found := _CANCEL.search(text)) is not None:
        codes = [c for c in memory.codes.get(found[1], []) if c not in text]
        if codes:
            text = text[: found.end()] + f" ({', '.join(codes)})" + text[found.end():]
    return text


def _group(entry: Entry, clauses: list[Clause]) -> list[str]:
    """Same-priority neighbours share a note; a resolved relative date closes its note."""
    speaker = "User" if entry.title == "User" else "Assistant"
    lines: list[str] = []
    current: list[Clause] = []

    def flush() -> None:
        if current:
            first, *rest = current
            head = f"{speaker} {first.text}" if first.verb_first else f"{speaker}: {first.text}"
            body = "; ".join([head, *(c.text for c in rest)])
            suffix = next((c.resolved for c in current if c.resolved), "")
            lines.append(f"* {first.marker} ({entry.time}) {body}{' ' + suffix if suffix else ''}")
            current.clear()

    for clause in clauses:
        if current and (clause.marker != current[0].marker or any(c.resolved for c in current)):
            flush()
        current.append(clause)
    flush()
    return lines


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
