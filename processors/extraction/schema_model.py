"""Turn an extractor's JSON schema into a pydantic validator.

Only the JSON-schema subset extractors use is supported (object/array/string/number/integer/
boolean/null, enum, anyOf/oneOf, type lists, required, additionalProperties); anything else
validates as "any value" rather than failing at construction, since an over-strict validator
would drop values a model produced correctly.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal, Optional, Union

import orjson
from pydantic import ConfigDict, Field, TypeAdapter, ValidationError, create_model

_SCALARS: dict[str, Any] = {"string": str, "number": float, "integer": int, "boolean": bool, "null": type(None)}


def python_type(schema: dict[str, Any] | bool | None, name: str = "Value") -> Any:
    """The Python/pydantic type a value must have to satisfy ``schema``."""
    if not isinstance(schema, dict) or not schema:
        return Any
    if "enum" in schema:
        return Literal[tuple(schema["enum"])]  # type: ignore[misc]
    if "const" in schema:
        return Literal[schema["const"]]  # type: ignore[misc]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return Union[tuple(python_type(option, name) for option in schema[key])]  # type: ignore[misc]
    kind = schema.get("type")
    if isinstance(kind, list):
        return Union[tuple(python_type({**schema, "type": k}, name) for k in kind)]  # type: ignore[misc]
    if kind == "array":
        return list[python_type(schema.get("items"), f"{name}Item")]  # type: ignore[misc]
    if kind == "object" or "properties" in schema:
        return object_model(schema, name)
    return _SCALARS.get(kind, Any)


def object_model(schema: dict[str, Any], name: str = "Value") -> Any:
    properties: dict[str, Any] = schema.get("properties") or {}
    if not properties:
        return dict[str, Any]
    required = set(schema.get("required") or [])
    fields: dict[str, Any] = {}
    for key, sub in properties.items():
        annotation = python_type(sub, f"{name}_{_identifier(key)}")
        if key in required:
            fields[_identifier(key)] = (annotation, Field(alias=key))
        else:
            fields[_identifier(key)] = (Optional[annotation], Field(default=None, alias=key))
    extra = "forbid" if schema.get("additionalProperties") is False else "allow"
    return create_model(  # type: ignore[call-overload]
        _identifier(name), __config__=ConfigDict(extra=extra, populate_by_name=True), **fields
    )


@lru_cache(maxsize=256)
def _adapter(schema_json: bytes) -> TypeAdapter[Any]:
    return TypeAdapter(python_type(orjson.loads(schema_json)))


def validate(value: Any, schema: dict[str, Any] | None) -> Any:
    """The value as plain JSON data if it satisfies ``schema``; raises ``ValueError`` otherwise."""
    if not schema:
        return value
    adapter = _adapter(orjson.dumps(schema, option=orjson.OPT_SORT_KEYS))
    try:
        checked = adapter.validate_python(value)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        raise ValueError(f"{'.'.join(map(str, first['loc'])) or 'value'}: {first['msg']}") from exc
    return adapter.dump_python(checked, mode="json", by_alias=True, exclude_unset=True)


def _identifier(key: str) -> str:
    cleaned = "".join(ch if ch.isalnum() else "_" for ch in key)
    return cleaned if cleaned and not cleaned[0].isdigit() else f"f_{cleaned}"
