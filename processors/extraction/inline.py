"""Inline extractor values: parsed from the Observer/Reflector answer itself (spec §5.6).

Order: ``<extracted-values>{…}</extracted-values>`` JSON objects first, then, for slugs still
missing, the last ``<slug>…</slug>`` section. For each candidate the JSON reading (when the text
looks like JSON), the raw string, then a JSON reading are tried; the first that fits the
extractor's schema wins.
"""

from __future__ import annotations

from typing import Any, Iterable

import orjson

from processors.extraction import schema_model, tags
from processors.extraction.types import EXTRACTED_VALUES, ExtractionFailure, ExtractorLike

_NO_VALUE = object()


def parse_inline_values(
    text: str, extractors: Iterable[ExtractorLike]
) -> tuple[dict[str, Any], list[ExtractionFailure]]:
    wanted = {extractor.slug: extractor for extractor in extractors}
    values: dict[str, Any] = {}
    failures: list[ExtractionFailure] = []
    for body in tags.blocks(text, EXTRACTED_VALUES):
        _read_extracted_values(body, wanted, values, failures)
    for slug, extractor in wanted.items():
        if slug in values:
            continue
        body = tags.last_block(text, slug)
        if body is None:
            continue
        value, error = _first_fitting(body, extractor.json_schema)
        if error:
            failures.append(ExtractionFailure(slug=slug, error=error))
        elif not is_empty(value):
            values[slug] = value
    return values, failures


def strip_inline_sections(text: str, slugs: Iterable[str]) -> str:
    return tags.strip_blocks(text, [EXTRACTED_VALUES, *slugs])


def is_empty(value: Any) -> bool:
    if isinstance(value, str):
        return not value.strip()
    return value is None or value == [] or value == {}


def _read_extracted_values(
    body: str,
    wanted: dict[str, ExtractorLike],
    values: dict[str, Any],
    failures: list[ExtractionFailure],
) -> None:
    stripped = body.strip()
    if not stripped.startswith(("{", "[")) or stripped in ("{}", "{...}", "{ ... }"):
        return
    try:
        parsed = orjson.loads(stripped)
    except orjson.JSONDecodeError as exc:
        failures.append(ExtractionFailure(slug=EXTRACTED_VALUES, error=f"not valid JSON: {exc}"))
        return
    if not isinstance(parsed, dict):
        failures.append(ExtractionFailure(slug=EXTRACTED_VALUES, error="expected a JSON object"))
        return
    for slug, raw in parsed.items():
        extractor = wanted.get(slug)
        if extractor is None or slug in values:
            continue
        try:
            value = schema_model.validate(raw, extractor.json_schema)
        except ValueError as exc:
            failures.append(ExtractionFailure(slug=slug, error=str(exc)))
            continue
        if not is_empty(value):
            values[slug] = value


def _first_fitting(body: str, schema: dict[str, Any] | None) -> tuple[Any, str | None]:
    text = body.strip()
    candidates: list[Any] = []
    looks_json = text.startswith(("{", "[", '"'))
    if looks_json:
        candidates.append(_json_or_missing(text))
    candidates.append(text)
    if not looks_json:
        candidates.append(_json_or_missing(text))
    last_error = "no value"
    for candidate in candidates:
        if candidate is _NO_VALUE:
            continue
        try:
            return schema_model.validate(candidate, schema), None
        except ValueError as exc:
            last_error = str(exc)
    return None, last_error


def _json_or_missing(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return _NO_VALUE
