"""The Reflector's instructions and request (spec §5.8), in this project's words.

The system message quotes the Observer's rules, format and guidelines whole (inside
``<observational-memory-instruction>``) so that the rewrite keeps the format the Observer writes
and the context reader expects, then says what reflecting means. It does not depend on the
observations or the level, so it is the same on every attempt of a ladder (prompt cache). The
request carries the observations, then the ask, then the level's guidance (``levels.py``), then the
previous values of the sections the call asks for (a synchronous reflection: the thread's current
task and suggested response; custom extractors), each as the tagged block the answer writes, then
the templates of the inline sections it asks for under ``## Additional Output Sections`` — the
structure of Mastra 1.31's ``buildReflectorPrompt``, which repeats them after the system prompt's
output format so the ask for them sits next to their previous values.

The checklist of rules these texts carry is ``processors/reflector/README.md``.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from processors.extraction.types import ExtractorLike, value_text
from processors.observer.prompt_rules import EXTRACTION_RULES
from processors.observer.system_prompt import GUIDELINES, closing, extractor_templates, output_format_block
from processors.reflector.levels import KEEP_DONE, KEEP_OUTCOME, guidance

_GROUP_TAG = re.compile(r"^[ \t]*</?observation-group[^>]*>[ \t]*\n?", re.MULTILINE)

ROLE = """You are the memory of an AI assistant. What you write now will be the ONLY thing the
assistant knows about its past with this user.

Another part of the same mind, the Observer, wrote the notes you are given. It followed the
instructions quoted below; read them to understand how your notes were made."""

PURPOSE = """You are the Reflector: the part of the same mind that looks back over all the notes at once. Your
purpose is to reflect on them: reorganise and streamline them, and connect them, drawing the
conclusions they support about what was learned, seen, heard and done.

You see the whole picture, which the Observer, busy with details and side quests, can lose.
Think hard about what the work is really for, and whether we got off track: if we did, say
where and why, and what would bring us back. If the work is still on track, good.

Rewrite the notes so that it is easy to carry on from them into the future: to reach further,
learn more, and do better work.

Your output REPLACES the notes entirely: it becomes the whole of the assistant's memory, and
whatever you leave out is forgotten at once. Leave nothing important out. Write for a reader who
knows nothing else: your rewrite is the entire memory."""

CONSOLIDATION = f"""When you merge and condense notes:
- Keep dates and times wherever they are given: the when of things is essential.
- Keep the timestamps that matter most: when things started, when they were finished, when
  something significant happened.
- Combine related items where that reads better ("agent opened config.yaml 6 times while tuning
  the cache").
{KEEP_DONE}
{KEEP_OUTCOME}
- Condense older notes harder; keep more detail for the recent ones."""

STATED_BEATS_ASKED = """Statements outrank questions:
- "User stated ..." is an assertion: the user told us something about themselves.
- "User asked ..." is a question or a request: the user wanted information.
When you consolidate, the user's statements win: on their own life the user has the final word.
If the notes hold "User stated they have three cats" and later "User asked how many cats they
have", keep the statement: the question does not cancel it, and the statement is its answer."""

THREADS = """=== NOTES FROM SEVERAL THREADS ===

When the notes contain <thread id="..."> sections (one user, several conversations):
- Keep a note in its thread when it only matters there (a task in progress there, a preference
  for that conversation).
- Move facts that hold everywhere (who the user is, general preferences) out of the sections and
  state them once.
- Keep recent notes, and notes that depend on their context, inside their thread.
- Notes from different threads that say the same general fact may be merged into one.

Example input:
<thread id="t-garden">
Date: Mar 3, 2025
* 🔴 (08:10) User lives in Ghent
* 🟡 (08:12) Planning raised vegetable beds
</thread>
<thread id="t-bike">
Date: Mar 3, 2025
* 🔴 (19:30) User lives in Ghent
* 🟡 (19:33) Comparing cargo bikes for school runs
</thread>

Example output:
Date: Mar 3, 2025
* 🔴 (08:10) User lives in Ghent
<thread id="t-garden">
* 🟡 (08:12) Planning raised vegetable beds
</thread>
<thread id="t-bike">
* 🟡 (19:33) Comparing cargo bikes for school runs
</thread>"""

ASK = (
    "Read these observations and write a refined, condensed version of them inside "
    "<observations>. It will be the assistant's entire memory from now on."
)


def reflector_system_prompt(inline_extractors: Iterable[ExtractorLike], instruction: str | None = None) -> str:
    extractors = list(inline_extractors)
    quoted = "\n\n".join(
        [
            EXTRACTION_RULES,
            f"=== OUTPUT FORMAT ===\n\n{output_format_block(extractors)}",
            f"=== GUIDELINES ===\n\n{GUIDELINES}",
        ]
    )
    sections = [
        ROLE,
        f"<observational-memory-instruction>\n{quoted}\n</observational-memory-instruction>",
        PURPOSE,
        CONSOLIDATION,
        STATED_BEATS_ASKED,
        THREADS,
        f"=== OUTPUT FORMAT ===\n\nUse the Observer's format above: <observations> with date groups and "
        f"prioritised notes.\n\n{output_format_block(extractors)}",
        closing([e.slug for e in extractors]),
    ]
    if instruction and instruction.strip():
        sections.append(f"=== CUSTOM INSTRUCTIONS ===\n{instruction.strip()}")
    return "\n\n".join(sections)


def reflector_prompt(
    observations: str,
    level: int,
    *,
    specific_guidance: str | None = None,
    prior_extracted: dict[str, Any] | None = None,
    asked: Iterable[ExtractorLike] = (),
    always_output: bool = False,
) -> str:
    sections = [
        "## OBSERVATIONS TO REFLECT ON\n\n" + _GROUP_TAG.sub("", observations).strip(),
        f"## Your Task\n\n{ASK}",
    ]
    if specific_guidance and specific_guidance.strip():
        sections.append(f"## SPECIFIC GUIDANCE\n\n{specific_guidance.strip()}")
    block = guidance(level)
    if block:
        sections.append(block)
    if prior_extracted:
        blocks = [f"<{slug}>\n{value_text(value)}\n</{slug}>" for slug, value in prior_extracted.items()]
        sections.append(
            "## Prior Extracted Values\n\n"
            + "\n\n".join(blocks)
            + "\n\nCarry these values forward, and change one only when the observations give a reason to."
        )
    templates = extractor_templates(asked, source="the observations give")
    if templates:
        sections.append(f"## Additional Output Sections\n\n{templates}")
    if always_output:
        sections.append("Always output an <observations> block.")
    return "\n\n".join(sections)
