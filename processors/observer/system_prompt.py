"""The Observer's standing instructions (spec §5.3), written for this project.

Order is fixed — role, note-taking rules, output format, guidelines, thread handling, closing,
custom instructions — and nothing in it depends on the conversation, so the system message is
byte-identical from call to call and stays in the provider's prompt cache. Only the set of
sections a call asks for (built-in and custom inline extractors) changes it.

The rules, the format and the guidelines are separate constants because the Reflector quotes
them. An extractor tag appears only when the call asks for that section (a buffered call has no
continuation hints, so its prompt never names them). The checklist of rules these texts carry is
``processors/observer/README.md``.
"""

from __future__ import annotations

from typing import Iterable

from processors.extraction.types import (
    CURRENT_TASK,
    SUGGESTED_RESPONSE,
    THREAD_TITLE,
    ExtractorLike,
    instructions_text,
)
from processors.observer.prompt_rules import EXTRACTION_RULES

ROLE = """You are the memory of an AI assistant. You watch its conversations with a user and write
down what happened as short, dated notes ("observations"). Later the assistant sees only your
notes, never the original messages: whatever you leave out is gone for good.

Write the notes that will let the assistant remember:"""

OUTPUT_FORMAT = """Priorities — start every note with one of these markers:
- 🔴 high: facts the user stated, preferences, goals not yet reached, anything critical
- 🟡 medium: project details, things learned, results of tools
- 🟢 low: minor details, observations you are unsure of
- ✅ done: a concrete task finished, a question answered, a problem solved, a goal or subtask
  reached, written so that the assistant can tell it is done

Indent related notes (for example a sequence of tool calls) under a parent note:
* 🔴 (15:10) Agent investigated the slow report page
  * -> ran the profiler: 80% of the time in one SQL query
  * -> read reports/query.py:112-140: the query has no index on created_at
  * -> added the index; the page now loads in 0.4 s
  * ✅ Report page is fast again

Group the notes by day under a header "Date: Mon D, YYYY"; inside a day, each note carries its
time on the 24-hour clock.

<observations>
Date: Mar 3, 2025
* 🔴 (09:12) User stated they are moving to Lisbon on Apr 1, 2025.
* 🟡 (09:14) Assistant listed three neighbourhoods: Alfama (old town), Baixa (central), Estrela (quiet).
  * -> User liked Estrela (near the park).
* 🟢 (09:18) User might prefer a ground-floor flat.

Date: Mar 4, 2025
* 🔴 (08:55) User will visit an apartment in Estrela tomorrow. (meaning Mar 5, 2025)
* ✅ (09:31) User accepted the moving checklist.
</observations>"""

GUIDELINES = """- Be specific enough that the assistant can act on a note.
  Good: "User wants answers in bullet points, no more than five." Too vague: "User has a formatting preference."
- Usually one to five notes per exchange.
- Write tersely: dense sentences, no filler words; every token counts.
- Do not repeat what is already noted. Put repeated similar actions (tool calls, browsing files)
  under one parent note with a sub-note for each new result.
- When the agent uses tools, note what it called, why, and what it learned.
- For files with line numbers, keep the line numbers when they help.
- When the agent gives a detailed answer, keep its content well enough that it could be given again.
- Start every note with a priority marker (🔴, 🟡, 🟢) or with ✅.
- Stay close to the user's words: short and medium messages almost verbatim, long ones summarised
  with key quotes. A user confirmation or a clearly resolved outcome becomes ✅; facts the user
  stated and open or critical points stay 🔴.
- Treat ✅ as the signal that something is finished and must not be done again unless new
  information changes it; a ✅ note says what exactly is now done.
- Prefer concrete outcomes to notes about the workflow or bookkeeping.
- When several concrete things were finished, list them rather than folding them into a vague
  progress summary.
- Record WHAT the agent did together with WHAT it means.
- When the user sends detailed messages or code, keep every important detail."""

SINGLE_THREAD = """=== THREADS ===

This is one conversation. Do not write thread ids or <thread> tags: the system records which
conversation your notes belong to."""

MULTI_THREAD_INPUT = """=== SEVERAL CONVERSATIONS ===

The history holds messages from several conversations (threads) of the same user, each inside a
<thread id="..."> section. Observe every thread on its own and write notes for each of them."""

AFTER_OBSERVATIONS = "after </observations>"
INSIDE_THREAD = "inside each thread block, after that thread's notes"
_EXAMPLE_VALUES = {
    CURRENT_TASK: "What the agent is working on in this thread",
    SUGGESTED_RESPONSE: "How the agent should open its next message here",
    THREAD_TITLE: "Short title of this thread",
}

ALWAYS_OUTPUT_NOTE = "These notes are the assistant's only memory: make them count."
USER_FIRST = "The user's messages matter most."
NEW_TASK_FIRST = (
    f"When the user asks something new or sets a new task, make clear in <{CURRENT_TASK}> that it now comes first."
)
WAIT_FOR_USER = (
    f"When the assistant owes the user a reply, say in <{SUGGESTED_RESPONSE}> that it should wait for the "
    "user's answer before going on with other work."
)


def observer_system_prompt(
    inline_extractors: Iterable[ExtractorLike], *, multi_thread: bool = False, instruction: str | None = None
) -> str:
    extractors = list(inline_extractors)
    slugs = [e.slug for e in extractors]
    sections = [ROLE, EXTRACTION_RULES]
    if multi_thread:
        sections.append(MULTI_THREAD_INPUT)
    sections.append(_output_section(extractors, multi_thread))
    sections.append(f"=== GUIDELINES ===\n\n{GUIDELINES}")
    if not multi_thread:
        sections.append(SINGLE_THREAD)
    sections.append(closing(slugs, wait_for_user=not multi_thread))
    if instruction and instruction.strip():
        sections.append(f"=== CUSTOM INSTRUCTIONS ===\n{instruction.strip()}")
    return "\n\n".join(sections)


def closing(slugs: list[str], *, wait_for_user: bool = True) -> str:
    """The last reminder: the notes are all there is, and the user's messages come first."""
    sentences = [ALWAYS_OUTPUT_NOTE, USER_FIRST]
    if CURRENT_TASK in slugs:
        sentences.append(NEW_TASK_FIRST)
    if wait_for_user and SUGGESTED_RESPONSE in slugs:
        sentences.append(WAIT_FOR_USER)
    return " ".join(sentences)


def output_format_block(extractors: list[ExtractorLike], *, place: str = AFTER_OBSERVATIONS) -> str:
    """Priorities, grouping, the example, then the optional sections asked for (shared with the Reflector)."""
    templates = extractor_templates(extractors, place=place)
    return f"{OUTPUT_FORMAT}\n\n{templates}" if templates else OUTPUT_FORMAT


def _output_section(extractors: list[ExtractorLike], multi_thread: bool) -> str:
    head = (
        "=== OUTPUT FORMAT ===\n\nAnswer with XML tags: the system reads your notes and the other "
        "sections from them and keeps them as memory over time."
    )
    if not multi_thread:
        return f"{head}\n\n{output_format_block(extractors)}"
    slugs = [e.slug for e in extractors]
    inside = ", ".join(["notes", *(f"<{s}>" for s in slugs)])
    return (
        f"{head} Put each thread's {inside} in its own <thread id=\"...\"> block inside <observations>."
        f"\n\nWithin each thread block, write notes in this format:\n\n"
        f"{output_format_block(extractors, place=INSIDE_THREAD)}"
        f"\n\nFor several threads the answer looks like this:\n\n{_multi_thread_example(slugs)}"
    )


def _multi_thread_example(slugs: list[str]) -> str:
    examples = (
        ("thread_a", "Mar 3, 2025", "* 🔴 (09:12) User stated they prefer train travel"),
        ("thread_b", "Mar 4, 2025", "* 🔴 (14:40) User asked how to export the invoices"),
    )
    blocks = []
    for thread_id, day, note in examples:
        sections = "".join(
            f"\n\n<{slug}>\n{_EXAMPLE_VALUES.get(slug, f'The {slug} value for this thread')}\n</{slug}>" for slug in slugs
        )
        blocks.append(f'<thread id="{thread_id}">\nDate: {day}\n{note}{sections}\n</thread>')
    return "<observations>\n" + "\n\n".join(blocks) + "\n</observations>"


def extractor_templates(
    extractors: Iterable[ExtractorLike], *, place: str = AFTER_OBSERVATIONS, source: str = "the conversation gives"
) -> str:
    """One ``<slug>`` template per inline extractor, after a short preamble; '' when none.

    ``source`` says what the values are read from (the Reflector: "the observations give")."""
    blocks = [
        f"<{e.slug}>\n{instructions_text(e).strip() or e.name}\n"
        f"Write this section when {source} you something for <{e.slug}>, and put only that inside the tag.\n"
        f"</{e.slug}>"
        for e in extractors
    ]
    if not blocks:
        return ""
    preamble = (
        f"Optional sections, each its own XML block {place}. Write a section when you have "
        "something for it; leave it out otherwise."
    )
    return "\n\n".join([preamble, *blocks])
