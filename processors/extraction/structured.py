"""Structured extractors: a follow-up call asking for one JSON object (spec §5.6).

The follow-up continues the Observer's conversation (its answer included), so the model extracts
from what it just read. Each property is validated on its own: one bad value fails only its
extractor. A failed call gets one retry with an explicit JSON-only instruction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from processors.extraction import schema_model
from processors.extraction.inline import is_empty
from processors.extraction.types import ExtractionFailure, ExtractorLike, instructions_text
from processors.model_port import ModelCall, ModelCallError, ModelClient, Usage

_JSON_ONLY = "Reply with the JSON object only: no prose, no code fences."


@dataclass
class StructuredResult:
    values: dict[str, Any] = field(default_factory=dict)
    failures: list[ExtractionFailure] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    attempts: int = 0


def combined_schema(extractors: list[ExtractorLike]) -> dict[str, Any]:
    """One object whose optional properties are the extractors' slugs."""
    return {
        "type": "object",
        "properties": {e.slug: e.json_schema or {} for e in extractors},
        "additionalProperties": False,
    }


def structured_request(extractors: list[ExtractorLike], previous: dict[str, Any]) -> str:
    lines = [
        "Now extract the following values from the conversation and your notes, as one JSON object.",
        "Leave out any property you cannot support with what you read.",
    ]
    for extractor in extractors:
        lines.append(f"- {extractor.slug}: {instructions_text(extractor).strip()}")
    carried = {e.slug: previous[e.slug] for e in extractors if e.include_previous_extraction and e.slug in previous}
    if carried:
        lines.append(
            "Previous values (keep those that still apply): " + orjson.dumps(carried).decode()
        )
    return "\n".join(lines)


async def run_structured(
    llm: ModelClient,
    base: ModelCall,
    answer: str,
    extractors: list[ExtractorLike],
    previous: dict[str, Any],
    retry_on_empty: bool = False,
) -> StructuredResult:
    result = StructuredResult()
    if not extractors:
        return result
    schema = combined_schema(extractors)
    request = structured_request(extractors, previous)
    messages = [*base.messages, {"role": "assistant", "content": answer}, {"role": "user", "content": request}]
    last_error = "no answer"
    for attempt in range(2):
        ask = messages if attempt == 0 else [*messages[:-1], {"role": "user", "content": f"{request}\n{_JSON_ONLY}"}]
        call = ModelCall(role="extractor", model=base.model, messages=ask, json_schema=schema,
                         provider_options=base.provider_options)
        try:
            reply = await llm.complete(call)
        except ModelCallError as exc:
            result.usage += exc.usage
            result.attempts += exc.attempts
            last_error = str(exc)
            continue
        result.usage += reply.usage
        result.attempts += reply.attempts
        parsed = _json_object(reply.text)
        if parsed is None:
            last_error = "answer was not a JSON object"
            continue
        if not parsed and retry_on_empty and attempt == 0:
            continue
        _collect(parsed, extractors, result)
        return result
    result.failures.extend(ExtractionFailure(slug=e.slug, error=last_error) for e in extractors)
    return result


def _collect(parsed: dict[str, Any], extractors: list[ExtractorLike], result: StructuredResult) -> None:
    for extractor in extractors:
        if extractor.slug not in parsed:
            continue
        try:
            value = schema_model.validate(parsed[extractor.slug], extractor.json_schema)
        except ValueError as exc:
            result.failures.append(ExtractionFailure(slug=extractor.slug, error=str(exc)))
            continue
        if not is_empty(value):
            result.values[extractor.slug] = value


def _json_object(text: str) -> dict[str, Any] | None:
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json").strip()
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end < start:
        return None
    try:
        parsed = orjson.loads(body[start : end + 1])
    except orjson.JSONDecodeError:
        return None
    return parsed if isinstance(parsed, dict) else None
