"""The offline Observer's extra sections: current task, suggested response, title, custom slugs.

Rules (spec §5.3 closing, §5.6 built-ins), by string rules only:

* current-task — the user's latest stated intent or request in the batch, or a question not yet
  answered ("Primary: …");
  with none, the prior current task from the task prompt (its ``<current-task>`` block); else
  "Waiting for the user".
* suggested-response — after a user message: answer it; after an assistant offer ("Want me to …?"):
  follow up on the offer once the user answers; otherwise wait for the user.
* thread-title — capitalised leading words of the first user message; custom slugs get the gist of
  the user's last message.
* A user sentence's reading as a task is a function of the sentence alone: remembered, as each
  call reads the batch's user sentences back from the last.
"""

from __future__ import annotations

import re

from processors.text.needles import literal_starts, may_match
from streams.llm.deterministic.clauses import (
    content_words,
    one_of,
    remembered,
    sentences,
    strip_filler,
    third_person,
    tidy,
)
from streams.llm.deterministic.history import Entry

BUILTIN = ("current-task", "suggested-response", "thread-title")
_WANTS = ("need to", "have to", "want to", "going to")
_REQUEST = re.compile(
    r"\?$|^(?:asked to|will|need|needs|want|wants|plan|plans)\b|"
    rf"\b{one_of(*_WANTS)}\b|"
    r"^(?:draft|write|book|find|plan|make|send|check|add|fix|shortlist|compare)\b",
    re.IGNORECASE,
)
_WANT_NEEDLES = literal_starts(*_WANTS)
_PRIOR_TASK = re.compile(r"^- prior current-task: (.+)$|^<current-task>\n((?s:.+?))\n</current-task>$", re.M)


def sections(entries: list[Entry], asked: set[str], task: str) -> list[str]:
    users = [e for e in entries if e.title == "User"]
    values = {
        "current-task": _current_task(entries, task),
        "suggested-response": _suggested_response(entries),
        "thread-title": _title(users[0].body) if users else "",
    }
    out = []
    for slug in sorted(asked, key=lambda s: (s not in BUILTIN, s)):
        value = values.get(slug, _clip(users[-1].body, 80) if users else "")
        if value:
            out.append(f"<{slug}>\n{value}\n</{slug}>")
    return out


def _current_task(entries: list[Entry], task: str) -> str:
    answered = False
    for entry in reversed(entries):
        if entry.title != "User":
            answered = answered or entry.title == "Assistant"
            continue
        for sentence in reversed(sentences(entry.body)):
            request, question = _request(sentence)
            if answered and question:
                continue  # a question the assistant already answered is not open
            if request:
                return f"Primary: {_clip(request, 100)}"
    prior = _PRIOR_TASK.search(task)
    return (prior[1] or prior[2]).strip() if prior else "Waiting for the user"


@remembered(32_768)
def _request(sentence: str) -> tuple[str, bool]:
    """The user's sentence as the task it states ("" when it states none), and whether it is a
    question; remembered, as every call reads the batch's user sentences from the last one back."""
    rest = strip_filler(sentence)
    text = tidy(third_person(rest, "user")[0]) if rest else ""
    asked = text if not rest.endswith("?") else rest
    states = bool(text) and len(content_words(text)) >= 3 and _may_request(asked) and _REQUEST.search(asked)
    return text if states else "", rest.endswith("?")


def _may_request(text: str) -> bool:
    """False only when :data:`_REQUEST` finds nothing: its "?" alternative needs a "?", its "^"
    alternatives match at the start or nowhere, and its other one needs one of its words — the
    pattern is scanned across the text only when one of those may match (processors/text/needles.py)."""
    return "?" in text or may_match(text, _WANT_NEEDLES) or _REQUEST.match(text) is not None


def _suggested_response(entries: list[Entry]) -> str:
    spoken = [e for e in entries if e.title in ("User", "Assistant")]
    if not spoken:
        return "Wait for the user"
    last = spoken[-1]
    if last.title == "User":
        return f"Answer the user's last message: {_clip(last.body, 80)}"
    offers = [s for s in sentences(last.body) if s.endswith("?")]
    if offers:
        offer = tidy(third_person(offers[-1], "assistant")[0]).rstrip("?")
        return f"If the user agrees, follow up on: {_clip(offer, 80)}"
    return "Wait for the user's next request"


def _title(text: str) -> str:
    words = [w for w in re.findall(r"[A-Za-z0-9']+", text) if len(w) > 2][:4]
    return " ".join(w.capitalize() for w in words) if len(words) >= 2 else "General Conversation"


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
