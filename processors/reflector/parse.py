"""Parse a Reflector answer (spec §5.8): like the Observer's, but the whole text is the last resort.

``current-task`` is read only when the call asked for it (a synchronous reflection, as Mastra's),
and never left in the observations; ephemeral anchors such as ``[O12]`` or ``[O3-N2]`` that a model
may copy from recall output are removed.
"""

from __future__ import annotations

import re
from typing import Iterable

from processors.extraction.inline import parse_inline_values, strip_inline_sections
from processors.extraction.types import CURRENT_TASK, ExtractorLike
from processors.observer.checks import format_warnings
from processors.observer.degenerate import is_degenerate, truncate_long_lines
from processors.observer.parse import ParsedAnswer, observation_blocks

_ANCHOR = re.compile(r"\[O\d+(?:-N\d+)?\]\s?")


def parse_reflector_answer(text: str, extractors: Iterable[ExtractorLike]) -> ParsedAnswer:
    text = truncate_long_lines(text)
    if is_degenerate(text):
        return ParsedAnswer(degenerate=True, warnings=["degenerate (repetitive) output"])
    inline = list(extractors)
    values, failures = parse_inline_values(text, inline)
    body = strip_inline_sections(text, [e.slug for e in inline] + [CURRENT_TASK])
    observations, warnings = observation_blocks(body)
    if not observations and not _has_observation_tag(body):
        observations = body.strip()
    observations = _ANCHOR.sub("", observations)
    return ParsedAnswer(
        observations=observations,
        values=values,
        failures=failures,
        warnings=warnings + format_warnings(observations),
    )


def _has_observation_tag(text: str) -> bool:
    return re.search(r"^[ \t]*<observations>", text, re.IGNORECASE | re.MULTILINE) is not None
