"""Parse an Observer answer into observations, hints, title and extracted values (spec §5.4).

The answer is untrusted text: tags may be missing, unclosed or mentioned mid-sentence. Only
``<observations>`` tags that start a line count; with none, list items (and date headers) are
kept; an unclosed block runs to the next section. Degenerate answers yield nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from processors.extraction.inline import parse_inline_values, strip_inline_sections
from processors.extraction.types import (
    CURRENT_TASK,
    SUGGESTED_RESPONSE,
    THREAD_TITLE,
    ExtractionFailure,
    ExtractorLike,
)
from processors.observer.checks import format_warnings, is_date_header
from processors.observer.degenerate import drop_repeated_lines, is_degenerate, truncate_long_lines

_OPEN = re.compile(r"^[ \t]*<observations>", re.IGNORECASE | re.MULTILINE)
_CLOSE = re.compile(r"^[ \t]*</observations>", re.IGNORECASE | re.MULTILINE)
_LIST_ITEM = re.compile(r"^\s*(?:[-*]|\d+\.)\s+")
_NEXT_SECTION = re.compile(r"^[ \t]*<[a-z][a-z0-9-]*(?:\s[^>]*)?>", re.IGNORECASE | re.MULTILINE)


@dataclass
class ParsedAnswer:
    observations: str = ""
    values: dict[str, Any] = field(default_factory=dict)
    failures: list[ExtractionFailure] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    degenerate: bool = False
    notes_found: bool = True  # False: no <observations> block and no list item in the answer

    @property
    def current_task(self) -> str | None:
        return _text_or_none(self.values.get(CURRENT_TASK))

    @property
    def suggested_response(self) -> str | None:
        return _text_or_none(self.values.get(SUGGESTED_RESPONSE))

    @property
    def thread_title(self) -> str | None:
        return _text_or_none(self.values.get(THREAD_TITLE))

    def custom_values(self) -> dict[str, Any]:
        return {k: v for k, v in self.values.items() if k not in (CURRENT_TASK, SUGGESTED_RESPONSE, THREAD_TITLE)}


def parse_observer_answer(text: str, extractors: Iterable[ExtractorLike]) -> ParsedAnswer:
    """``extractors``: every inline extractor the prompt asked for, built-ins included."""
    text = truncate_long_lines(text)
    if is_degenerate(text):
        return ParsedAnswer(degenerate=True, warnings=["degenerate (repetitive) output"])
    inline = list(extractors)
    values, failures = parse_inline_values(text, inline)
    body = strip_inline_sections(text, [e.slug for e in inline])
    observations, structure_warnings = observation_blocks(body)
    observations, repeated = drop_repeated_lines(observations)
    if repeated:
        structure_warnings.append(f"{repeated} repeated line(s) dropped")
    notes_found = bool(observations) or _OPEN.search(body) is not None
    return ParsedAnswer(
        observations=observations,
        values=values,
        failures=failures,
        warnings=structure_warnings + format_warnings(observations)
        + ([] if notes_found else ["no <observations> block and no list item: no notes in the answer"]),
        notes_found=notes_found,
    )


def observation_blocks(text: str) -> tuple[str, list[str]]:
    """Line-anchored ``<observations>`` blocks joined by newlines, else the list items."""
    found: list[str] = []
    warnings: list[str] = []
    position = 0
    while (opening := _OPEN.search(text, position)) is not None:
        closing = _CLOSE.search(text, opening.end())
        if closing is None:
            following = _NEXT_SECTION.search(text, opening.end())
            end = following.start() if following else len(text)
            found.append(text[opening.end() : end].strip("\n"))
            warnings.append("unclosed <observations> block; kept its content")
            break
        found.append(text[opening.end() : closing.start()].strip("\n"))
        position = closing.end()
    if found:
        return "\n".join(block.strip() for block in found if block.strip()), warnings
    kept = [line.rstrip() for line in text.split("\n") if _LIST_ITEM.match(line) or is_date_header(line)]
    if kept:
        warnings.append("no <observations> block; kept list items only")
    return "\n".join(kept).strip(), warnings


def _text_or_none(value: Any) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    return text.strip() or None
