"""The dead-letter envelope: an input record the pipeline refused, with the reason, never dropped.

A bad record must not stop its partition (ARCHITECTURE rule 6), so it is copied here byte for byte
with where it came from and why it failed; an operator can read the reason, fix the producer, and
replay ``value`` to ``topic``. Key and value are bytes because the failure may be that they are
not JSON at all; in JSON they travel as base64.
"""

from __future__ import annotations

import base64
from typing import Annotated, Literal

from pydantic import Field, PlainSerializer

from schemas.base import SchemaError, VersionedModel

Stage = Literal["decode", "validate", "apply"]

# Standard base64 (pydantic's default is the URL-safe alphabet), so `base64 -d` and ClickHouse's
# base64Decode read a dead letter as is; decoding accepts either alphabet.
RawBytes = Annotated[
    bytes, PlainSerializer(lambda raw: base64.b64encode(raw).decode("ascii"), when_used="json")
]


class DeadLetter(VersionedModel):
    """``stage`` says how far the record got: unparseable, refused by a model, or refused by the fold."""

    kind: Literal["dead-letter"] = "dead-letter"
    topic: str = Field(min_length=1)
    partition: int = Field(ge=0)
    offset: int = Field(ge=0)
    key: RawBytes | None = None
    value: RawBytes | None = None
    error: str = Field(min_length=1)
    field: str | None = Field(default=None, description="dotted path of the offending field, if known")
    stage: Stage
    failed_at: int = Field(ge=0, description="UTC epoch ms")

    @classmethod
    def from_failure(
        cls,
        *,
        topic: str,
        partition: int,
        offset: int,
        key: bytes | None,
        value: bytes | None,
        error: BaseException,
        stage: Stage,
        failed_at: int,
    ) -> DeadLetter:
        """Wrap a failed input record; a :class:`SchemaError` contributes the field it names."""
        field = (error.field or None) if isinstance(error, SchemaError) else None
        return cls(
            topic=topic,
            partition=partition,
            offset=offset,
            key=key,
            value=value,
            error=str(error) or type(error).__name__,
            field=field,
            stage=stage,
            failed_at=failed_at,
        )
