"""What an extractor *is* (spec §5.6): a named value the Observer pulls out of the conversation.

This file holds only the declaration and its construction rules; running extractors and parsing
their output live in ``processors/extraction/``. The rules are enforced here so that a config with
a bad extractor fails when it is loaded, long before an Observer call.

* The slug (derived from the name) is the extractor's identity: the XML tag the Observer writes,
  the key it is stored under, the system message it is shown in. Hence slugs must be tag-safe,
  unique within a pipeline, and must not collide with OM's own tags (reserved slugs).
* A config cannot carry a Python callable, so a hook extractor names its ``on_extracted`` hook;
  the extraction runtime looks the name up in its registry.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import AliasChoices, Field, ValidationInfo, model_validator

from processors.config.base import ConfigModel
from processors.config.builtin_instructions import (
    CURRENT_TASK_INSTRUCTIONS,
    SUGGESTED_RESPONSE_INSTRUCTIONS,
    THREAD_TITLE_INSTRUCTIONS,
)

ExtractorMode = Literal["inline", "structured", "hook"]

RESERVED_SLUGS = frozenset(
    {
        "observations",
        "observation",
        "extracted-values",
        "thread",
        "message",
        "messages",
        "conversation",
        "history",
        "system",
        "user",
        "assistant",
        "tool",
        "current-task",
        "suggested-response",
        "thread-title",
    }
)
UNSAFE_KEY_SEGMENTS = frozenset({"__proto__", "constructor", "prototype"})
WORKING_MEMORY_SLUG = "working-memory"

_VALID_SLUG = re.compile(r"^[a-z]([a-z0-9-]*[a-z0-9])?$")
_BUILTIN_CONTEXT = {"builtin": True}


def slugify(name: str) -> str:
    """``"User profile"`` → ``"user-profile"``: the tag-safe identity of an extractor."""
    slug = re.sub(r"['\"`]", "", name.strip().lower())
    return re.sub(r"[^a-z0-9]+", "-", slug).rstrip("-")


class ExtractorSpec(ConfigModel):
    """One extractor. ``mode`` is derived when not given: schema → structured, else inline."""

    name: str
    instructions: str | None = None
    json_schema: dict[str, Any] | None = Field(
        default=None, validation_alias=AliasChoices("json_schema", "jsonSchema", "schema")
    )
    mode: ExtractorMode | None = None
    on_extracted: str | None = None
    include_previous_extraction: bool = True
    metadata_key_path: str | Literal[False] | None = None
    retry_structured_extraction_on_empty_object: bool = False

    @property
    def slug(self) -> str:
        return slugify(self.name)

    @model_validator(mode="after")
    def _check(self, info: ValidationInfo) -> ExtractorSpec:
        name = self.name.strip()
        if not name:
            raise ValueError("extractor name must not be empty")
        slug = slugify(name)
        if not _VALID_SLUG.match(slug):
            raise ValueError(
                f"extractor name {name!r} gives slug {slug!r}; a slug must start with a letter and "
                "end with a letter or digit"
            )
        if slug in RESERVED_SLUGS and not (info.context or {}).get("builtin"):
            raise ValueError(
                f"extractor name {name!r} gives the reserved slug {slug!r}; choose another name"
            )
        mode = self.mode or ("structured" if self.json_schema is not None else "inline")
        self._check_mode(name, mode)
        key_path = self.metadata_key_path
        if key_path is None:
            key_path = f"extracted.{slug}"
        elif key_path is not False:
            _check_key_path(name, key_path)
        self._derive(name=name, mode=mode, metadata_key_path=key_path)
        return self

    def _check_mode(self, name: str, mode: ExtractorMode) -> None:
        if mode == "hook":
            if not self.on_extracted:
                raise ValueError(f"hook extractor {name!r} needs on_extracted (a hook name)")
            if self.instructions is not None or self.json_schema is not None:
                raise ValueError(
                    f"hook extractor {name!r} may not have instructions or json_schema; the hook "
                    "computes the value itself"
                )
            return
        if not (self.instructions or "").strip():
            raise ValueError(f"extractor {name!r} needs instructions (unless mode is 'hook')")
        if mode == "structured" and self.json_schema is None:
            raise ValueError(f"structured extractor {name!r} needs a json_schema")

    @classmethod
    def builtin(cls, **fields: Any) -> ExtractorSpec:
        """Construct one of OM's own extractors, which may use reserved slugs."""
        return cls.model_validate(fields, context=_BUILTIN_CONTEXT)


def _check_key_path(name: str, key_path: str) -> None:
    segments = key_path.split(".")
    if any(not segment for segment in segments):
        raise ValueError(f"extractor {name!r}: metadata_key_path {key_path!r} has an empty segment")
    unsafe = UNSAFE_KEY_SEGMENTS.intersection(segments)
    if unsafe:
        raise ValueError(
            f"extractor {name!r}: metadata_key_path {key_path!r} uses the unsafe segment "
            f"{sorted(unsafe)[0]!r}"
        )


def check_unique_slugs(specs: Iterable[ExtractorSpec], taken: Iterable[str] = ()) -> None:
    """Refuse two extractors of one pipeline with the same slug (or a slug in ``taken``)."""
    seen = set(taken)
    for spec in specs:
        if spec.slug in seen:
            raise ValueError(
                f"extractor {spec.name!r} has slug {spec.slug!r}, already used in this pipeline"
            )
        seen.add(spec.slug)


CURRENT_TASK = ExtractorSpec.builtin(
    name="current-task",
    instructions=CURRENT_TASK_INSTRUCTIONS,
    metadata_key_path="currentTask",
)
SUGGESTED_RESPONSE = ExtractorSpec.builtin(
    name="suggested-response",
    instructions=SUGGESTED_RESPONSE_INSTRUCTIONS,
    metadata_key_path="suggestedResponse",
)
THREAD_TITLE = ExtractorSpec.builtin(
    name="thread-title",
    instructions=THREAD_TITLE_INSTRUCTIONS,
    metadata_key_path="threadTitle",
)
BUILTIN_EXTRACTORS = (CURRENT_TASK, SUGGESTED_RESPONSE, THREAD_TITLE)
