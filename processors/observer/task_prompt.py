"""The Observer's task message: prior notes, prior hints, then the ask (spec §5.2).

It travels as its own user message before the history message, so the model can tell "what to
do" from "what happened" and the history is the last thing it reads.

Deliberate differences from Mastra 1.31, kept on purpose:
* The "Previous Observations" are cut to ``previous_observer_tokens`` (newest lines and the
  important older ones kept, gaps marked; ``observer/previous.py``): Mastra has the option but
  leaves it unwired, so a long log would crowd the Observer's window there.
* A reflection that is buffered but not yet activated stands in for the lines it covers, so the
  Observer sees the memory as it will be once the reflection lands, not both versions.
* In resource scope each message appears once, in its own thread's section of the history; the
  prior hints are listed per thread here.
* A single thread's previous sections (current task, suggested response, title, custom values) are
  shown once each, as the tagged block the answer writes again. Mastra 1.31 lists the built-in ones
  twice, as ``- prior current-task: …`` lines and again as tagged blocks; one copy is enough.
"""

from __future__ import annotations

from typing import Any, Iterable

from processors.extraction.types import CURRENT_TASK, SUGGESTED_RESPONSE, THREAD_TITLE, ExtractorLike, value_text
from processors.observer.types import PriorMetadata

ALWAYS_OUTPUT = "Always output an <observations> block, even if it only repeats nothing new."
NO_REPEAT = (
    "Do not repeat these notes: they are kept, and what you write is appended after them."
)
TRUNCATED = (
    "The previous observations above were shortened to fit this call; the assistant itself still "
    "has its full memory."
)
HINTS = "These hints are from the previous round: carry them on, and update them to what the new messages show."
REWRITE_BLOCKS = (
    "Each block above is what you wrote last round. Write each of these blocks again in your answer: "
    "changed where the new messages change it, as it is where it still holds."
)
THREAD_HINTS = (
    "These hints are from each thread's previous round: carry them on, and update each from that "
    "thread's new messages."
)
ASK = (
    "Write new observations for the message history in the next message. Do not repeat what the "
    "previous observations already say. Follow the format of your instructions."
)


def task_prompt(
    previous: str,
    prior: PriorMetadata,
    inline_extractors: Iterable[ExtractorLike],
    *,
    truncated: bool = False,
    always_output: bool = False,
) -> str:
    sections: list[str] = []
    if previous.strip():
        sections.append(
            "## Previous Observations\n\n"
            f"{previous.strip()}\n\n---\n\n{NO_REPEAT}"
        )
    blocks = prior_blocks(prior, list(inline_extractors))
    if blocks:
        note = f"{TRUNCATED}\n" if truncated else ""
        sections.append("## Prior Thread Metadata\n\n" + "\n\n".join(blocks) + f"\n\n{note}{HINTS} {REWRITE_BLOCKS}")
    sections.append(f"## Your Task\n\n{ASK}")
    if always_output:
        sections.append(ALWAYS_OUTPUT)
    return "\n\n".join(sections)


def multi_thread_task_prompt(
    previous: str,
    priors: dict[str, PriorMetadata],
    inline_extractors: Iterable[ExtractorLike],
    *,
    truncated: bool = False,
) -> str:
    extractors = list(inline_extractors)
    sections: list[str] = []
    if previous.strip():
        sections.append(f"## Previous Observations\n\n{previous.strip()}\n\n---\n\n{NO_REPEAT}")
    blocks = []
    for thread_id, prior in priors.items():
        lines = _prior_lines(prior, extractors)
        if lines:
            blocks.append(f"- thread {thread_id}\n" + "\n".join(f"  {line}" for line in lines))
    if blocks:
        note = f"{TRUNCATED}\n" if truncated else ""
        sections.append("## Prior Thread Metadata\n\n" + "\n".join(blocks) + f"\n\n{note}{THREAD_HINTS}")
    sections.append(_multi_thread_ask(extractors))
    return "\n\n".join(sections)


def _multi_thread_ask(extractors: list[ExtractorLike]) -> str:
    slugs = [e.slug for e in extractors]
    extra = "".join(f"\n<{slug}>...</{slug}>" for slug in slugs)
    example = "\n".join(
        f'<thread id="{tid}">\nDate: Jan 5, 2025\n* 🔴 (10:02) {note}{extra}\n</thread>'
        for tid, note in (("t-1", "User stated they prefer tea."), ("t-2", "User asked for a packing list."))
    )
    return (
        "## Your Task\n\n"
        "Write new observations for every thread of the message history in the next message. Do "
        "not repeat what the previous observations already say. Inside one <observations> "
        "block, put one <thread id=\"...\"> section per thread with its notes"
        + (" and its own " + ", ".join(f"<{s}>" for s in slugs) + " sections" if slugs else "")
        + ".\n\nExample:\n<observations>\n"
        + example
        + "\n</observations>"
    )


def prior_blocks(prior: PriorMetadata, extractors: list[ExtractorLike]) -> list[str]:
    """Each section the call asks for that has a previous value, as the tagged block it is written in."""
    return [f"<{slug}>\n{value_text(value)}\n</{slug}>" for slug, value in _prior_values(prior, extractors)]


def _prior_lines(prior: PriorMetadata, extractors: list[ExtractorLike]) -> list[str]:
    """Multi-thread: one line per built-in hint (the thread's list stays compact), blocks for the rest."""
    builtins = {CURRENT_TASK, SUGGESTED_RESPONSE, THREAD_TITLE}
    return [
        f"- prior {slug}: {value}" if slug in builtins else f"<{slug}>{value_text(value)}</{slug}>"
        for slug, value in _prior_values(prior, extractors)
    ]


def _prior_values(prior: PriorMetadata, extractors: list[ExtractorLike]) -> list[tuple[str, Any]]:
    slugs = {e.slug for e in extractors}
    builtins = (
        (CURRENT_TASK, prior.current_task),
        (SUGGESTED_RESPONSE, prior.suggested_response),
        (THREAD_TITLE, prior.thread_title),
    )
    values = [(slug, value) for slug, value in builtins if value and slug in slugs]
    for extractor in extractors:
        if extractor.include_previous_extraction and extractor.slug not in dict(builtins):
            value = prior.extracted.get(extractor.slug)
            if value not in (None, "", [], {}):
                values.append((extractor.slug, value))
    return values
