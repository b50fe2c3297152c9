"""The common ground of every wire model: versioning, aliases and one error type.

Rules this file keeps:

* Every model on a topic carries ``schema_version``; a version this code does not know is refused
  with :class:`SchemaError` naming that field, never half-read.
* Field names are snake_case on the wire. Mastra's camelCase spellings (``createdAt``,
  ``providerMetadata``) are accepted on input so that history exported from Mastra reads as is.
* Bytes go through orjson only; :func:`decode` turns *every* failure (bad JSON, wrong type, missing
  field) into :class:`SchemaError` whose ``field`` says where, so a dead-letter reason is readable.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

import orjson
from pydantic import AliasChoices, AliasGenerator, BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel

SCHEMA_VERSION = 1
# The latest event time any record may carry: 9999-12-31T23:59:59.999Z. Every later stage agrees on
# it (ClickHouse Int64 and DateTime64, JavaScript dates, Python datetimes), so a larger value is
# refused where the record enters, with a dead letter naming the field, instead of failing later.
MAX_EPOCH_MS = 253_402_300_799_999

M = TypeVar("M", bound="WireModel")


class SchemaError(ValueError):
    """A payload that cannot become a model; ``field`` names the offending field (dotted path)."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}" if field else reason)
        self.field = field
        self.reason = reason


def both_spellings(name: str) -> AliasChoices:
    """Accept ``snake_case`` and Mastra's ``camelCase`` for a field (used by wire and config models)."""
    camel = to_camel(name)
    return AliasChoices(name, camel) if camel != name else AliasChoices(name)


class WireModel(BaseModel):
    """Base of every model that crosses a process boundary."""

    model_config = ConfigDict(
        extra="forbid",
        populate_by_name=True,
        alias_generator=AliasGenerator(validation_alias=both_spellings),
        ser_json_bytes="base64",
        val_json_bytes="base64",
    )

    def to_json_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)

    def to_bytes(self) -> bytes:
        """Compact JSON, straight from pydantic-core's serializer (no intermediate dict)."""
        return self.__pydantic_serializer__.to_json(self, exclude_none=True)


class VersionedModel(WireModel):
    """A top-level record on a topic: it carries the schema version it was written with."""

    SUPPORTED_VERSIONS: ClassVar[frozenset[int]] = frozenset({SCHEMA_VERSION})
    schema_version: int = SCHEMA_VERSION

    @classmethod
    def from_obj(cls: type[M], obj: Any) -> M:
        if isinstance(obj, dict):
            version = obj.get("schema_version", obj.get("schemaVersion", SCHEMA_VERSION))
            if version not in cls.SUPPORTED_VERSIONS:  # type: ignore[attr-defined]
                raise SchemaError(
                    "schema_version",
                    f"unknown schema version {version!r}; this build reads "
                    f"{sorted(cls.SUPPORTED_VERSIONS)}",  # type: ignore[attr-defined]
                )
        return validate(cls, obj)


def validate(cls: type[M], obj: Any) -> M:
    """``cls.model_validate`` with the first error turned into a :class:`SchemaError`."""
    try:
        return cls.model_validate(obj)
    except ValidationError as exc:
        raise _schema_error(exc) from exc


def decode(cls: type[M], data: bytes | str) -> M:
    """Bytes from a topic to a model, or :class:`SchemaError` saying which field is wrong."""
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise SchemaError("", f"not valid JSON: {exc}") from exc
    if not isinstance(obj, dict):
        raise SchemaError("", f"expected a JSON object, got {type(obj).__name__}")
    if issubclass(cls, VersionedModel):
        return cls.from_obj(obj)
    return validate(cls, obj)


def _schema_error(exc: ValidationError) -> SchemaError:
    first = exc.errors(include_url=False)[0]
    path = ".".join(str(p) for p in first.get("loc", ()))
    return SchemaError(path, first.get("msg", "invalid value"))
