"""What the extraction runtime needs of an extractor, and what it reports back.

``ExtractorLike`` is the shape of ``processors.config.extractor_spec.ExtractorSpec``; naming the
attributes here keeps this package usable with any object that has them (tests use dataclasses).
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel

from processors.tokens.js_compat import js_json

CURRENT_TASK = "current-task"
SUGGESTED_RESPONSE = "suggested-response"
THREAD_TITLE = "thread-title"
EXTRACTED_VALUES = "extracted-values"
BUILT_IN_SLUGS = (CURRENT_TASK, SUGGESTED_RESPONSE, THREAD_TITLE)


class ExtractorLike(Protocol):
    name: str
    slug: str
    instructions: Any
    json_schema: dict[str, Any] | None
    mode: str
    include_previous_extraction: bool


class ExtractionFailure(BaseModel):
    """One extractor that produced no valid value; the others still count."""

    slug: str
    error: str


def is_structured(extractor: ExtractorLike) -> bool:
    return str(getattr(extractor, "mode", "inline")) == "structured"


def instructions_text(extractor: ExtractorLike) -> str:
    value = extractor.instructions
    return value if isinstance(value, str) else ""


def value_text(value: Any) -> str:
    """A value as the prompts show it (Mastra's ``renderPriorValue``): a string as it is, anything
    else as ``JSON.stringify(value)``."""
    return value if isinstance(value, str) else js_json(value, indent=0)
