"""The Reflector's instructions and request (spec §5.8), in this project's words.

It gets the Observer's rules verbatim (inside ``<observational-memory-instruction>``) so that
its rewrite keeps the same format the Observer writes and the context reader expects.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

import orjson

from processors.extraction.types import ExtractorLike
from processors.observer.system_prompt import GUIDELINES, OBSERVATION_RULES, OUTPUT_FORMAT, extractor_templates
from processors.reflector.levels import guidance

_GROUP_TAG = re.compile(r"^[ \t]*</?observation-group[^>]*>[ \t]*\n?", re.MULTILINE)

ROLE = """You are the part of an AI assistant's memory that tidies its notes. Another part (the
Observer) wrote the notes below following the instructions quoted here:"""

TASK = """Your job: reorganise and condense the notes, connect related items, draw conclusions,
and notice if the work drifted from what the user wanted. Your output REPLACES the notes
entirely; anything you leave out is forgotten.

Rules:
- Keep dates ("Date: Mon D, YYYY" headers) and the (HH:MM) times of the notes you keep.
- Merge related notes; keep ✅ markers together with what was achieved.
- Compress old material more than recent material; keep recent detail.
- What the user stated outranks what the user asked.
- Notes inside <thread id="..."> sections belong to that thread: keep them there; facts that
  hold for every thread may move outside the sections.
- Keep priority markers (🔴 🟡 🟢 ✅) at the start of every note."""


def reflector_system_prompt(inline_extractors: Iterable[ExtractorLike], instruction: str | None = None) -> str:
    rules = "\n\n".join([OBSERVATION_RULES, OUTPUT_FORMAT, GUIDELINES])
    sections = [ROLE, f"<observational-memory-instruction>\n{rules}\n</observational-memory-instruction>", TASK]
    templates = extractor_templates(inline_extractors)
    if templates:
        sections.append(templates)
    if instruction and instruction.strip():
        sections.append(f"=== CUSTOM INSTRUCTIONS ===\n{instruction.strip()}")
    return "\n\n".join(sections)


def reflector_prompt(
    observations: str,
    level: int,
    *,
    specific_guidance: str | None = None,
    prior_extracted: dict[str, Any] | None = None,
    always_output: bool = False,
) -> str:
    sections = [
        "## OBSERVATIONS TO REFLECT ON\n\n" + _GROUP_TAG.sub("", observations).strip(),
        "## Your Task\n\nWrite the refined, condensed version of these notes inside <observations>.",
    ]
    if specific_guidance and specific_guidance.strip():
        sections.append(f"## SPECIFIC GUIDANCE\n\n{specific_guidance.strip()}")
    block = guidance(level)
    if block:
        sections.append(block)
    if prior_extracted:
        sections.append(
            "## Prior Extracted Values\n\nCarry these forward where they still apply: "
            + orjson.dumps(prior_extracted).decode()
        )
    if always_output:
        sections.append("Always output an <observations> block.")
    return "\n\n".join(sections)
