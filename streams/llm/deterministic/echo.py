"""The ``echo`` variant of the offline Observer: each rendered entry copied into one dated note.

Model ``om-deterministic/echo``. It keeps every message's gist (first sentence) and compresses
nothing; tests that pin this copying behaviour use it. The default ``observer`` is :mod:`.observe`.

User statements are 🔴, assistant and tool activity 🟡, reasoning and attachments 🟢. Relative
days in user text ("tomorrow", "in 3 days") are resolved against the message's date, the way
the real Observer is asked to. The same prompt always yields the same answer.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Iterable

from streams.llm.deterministic.history import Entry, parse_history, split_threads

_RELATIVE = (
    (re.compile(r"\btomorrow\b", re.I), lambda m: 1),
    (re.compile(r"\byesterday\b", re.I), lambda m: -1),
    (re.compile(r"\bnext week\b", re.I), lambda m: 7),
    (re.compile(r"\blast week\b", re.I), lambda m: -7),
    (re.compile(r"\bin (\d+) days?\b", re.I), lambda m: int(m[1])),
    (re.compile(r"\b(\d+) days? ago\b", re.I), lambda m: -int(m[1])),
)
_BUILTIN_TEMPLATES = ("current-task", "suggested-response", "thread-title")
_TEMPLATE = re.compile(r"^<([a-z][a-z0-9-]*)>$", re.M)
_NOT_EXTRACTORS = {"observations", "thread", "observational-memory-instruction"}


def observe(system: str, task: str, history: str) -> str:
    asked = {slug for slug in _TEMPLATE.findall(system) if slug not in _NOT_EXTRACTORS}
    threads = split_threads(history)
    if threads is None:
        entries = parse_history(history)
        body = "\n".join(_notes(entries, task))
        return "\n\n".join([f"<observations>\n{body}\n</observations>", *_sections(entries, asked)])
    blocks = []
    for thread_id, text in threads.items():
        entries = parse_history(text)
        inner = "\n".join(["\n".join(_notes(entries, task)), *_sections(entries, asked)])
        blocks.append(f'<thread id="{thread_id}">\n{inner}\n</thread>')
    return "<observations>\n" + "\n".join(blocks) + "\n</observations>"


def _notes(entries: list[Entry], previous: str) -> Iterable[str]:
    day: date | None = None
    for entry in entries:
        note = _note(entry)
        if note is None or _already_noted(entry.body, previous):
            continue
        if entry.day != day:
            day = entry.day
            yield f"Date: {_fmt(day)}"
        yield note


def _note(entry: Entry) -> str | None:
    """Notes are terse like a real Observer's: the gist (first sentence), never the whole message."""
    title, body = entry.title, _clip(_first_sentence(entry.body), 160)
    if title == "User":
        verb = "asked" if entry.body.rstrip().endswith("?") else "stated"
        return f'* 🔴 ({entry.time}) User {verb}: "{body}"{_resolved(entry)}'
    if title == "Assistant":
        return f"* 🟡 ({entry.time}) Assistant replied: {_clip(body, 110)}"
    if title.startswith("Tool Call "):
        return f"* 🟡 ({entry.time}) Called {title[10:]} with {_clip(entry.body, 100)}"
    if title.startswith("Tool Result "):
        return f"  * -> {title[12:]} returned: {_clip(entry.body, 140)}"
    if title.startswith(("Tool Error ", "Tool Denied ")):
        return f"* 🟡 ({entry.time}) {title}: {_clip(entry.body, 140)}"
    if title in ("Reasoning", "Image", "File"):
        return f"* 🟢 ({entry.time}) {title}: {_clip(entry.body, 120)}"
    return f"* 🟢 ({entry.time}) {title}: {body}"


def _sections(entries: list[Entry], asked: set[str]) -> list[str]:
    users = [e.body for e in entries if e.title == "User"]
    assistants = [e.body for e in entries if e.title == "Assistant"]
    values = {
        "current-task": f"Primary: {_clip(users[-1], 120)}" if users else "Waiting for the user",
        "suggested-response": (
            f"Continue from: {_clip(assistants[-1], 100)}" if assistants else "Answer the user's last message"
        ),
        "thread-title": _title(users[0]) if users else "",
    }
    sections = []
    for slug in sorted(asked, key=lambda s: (s not in _BUILTIN_TEMPLATES, s)):
        value = values.get(slug, _clip(users[-1], 80) if users else "")
        if value:
            sections.append(f"<{slug}>\n{value}\n</{slug}>")
    return sections


def _resolved(entry: Entry) -> str:
    for pattern, offset in _RELATIVE:
        found = pattern.search(entry.body)
        if found:
            return f" (meaning {_fmt(entry.day + timedelta(days=offset(found)))})"
    return ""


def _title(text: str) -> str:
    words = [w for w in re.findall(r"[A-Za-z0-9']+", text) if len(w) > 2][:4]
    return " ".join(w.capitalize() for w in words) if len(words) >= 2 else "General Conversation"


def _already_noted(body: str, previous: str) -> bool:
    snippet = " ".join(body.split())[:60]
    return len(snippet) >= 20 and snippet in previous


def _first_sentence(text: str) -> str:
    """Up to the first sentence end that leaves at least 40 characters (so 'Hi!' is not all)."""
    flat = " ".join(text.split())
    for found in re.finditer(r"[.!?](\s|$)", flat):
        if found.end() >= 40:
            return flat[: found.end()].strip()
    return flat


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _fmt(day: date) -> str:
    return f"{day:%b} {day.day}, {day.year}"
