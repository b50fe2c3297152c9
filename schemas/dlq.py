"""The dead-letter envelope: an input record the pipeline refused, with the reason, never dropped.

A bad record must not stop its partition (ARCHITECTURE rule 6), so it is copied here with where it
came from and why it failed; an operator can read the reason, fix the producer, and replay
``value`` to ``topic``. Key and value are bytes because the failure may be that they are not JSON
at all; in JSON they travel as base64.

A dead letter always fits the broker's record limit, whatever it wraps (issue 18): a key or value
longer than its budget is kept as its first bytes only (``truncated``), and ``key_size``/
``value_size`` and ``key_sha256``/``value_sha256`` describe the original, so a truncated letter
still identifies its record (the raw topic holds it whole until retention). The reason and the
field are cut to a readable length too. :data:`MAX_LETTER_BYTES` bounds the encoded letter, a
quarter of Kafka's default 1 MiB record limit.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Annotated, Literal

from pydantic import Field, PlainSerializer

from schemas.base import SchemaError, VersionedModel

Stage = Literal["decode", "validate", "apply"]
VALUE_KEPT = 128 * 1024  # bytes of an oversized value kept verbatim (base64 makes it 4/3 larger)
KEY_KEPT = 1024
TEXT_KEPT = 2000  # characters of the reason and of the field path
MAX_LETTER_BYTES = 256 * 1024

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
    key_size: int | None = Field(default=None, ge=0, description="bytes of the original key")
    value_size: int | None = Field(default=None, ge=0, description="bytes of the original value")
    key_sha256: str | None = Field(default=None, description="hex digest of the original key")
    value_sha256: str | None = Field(default=None, description="hex digest of the original value")
    truncated: bool = Field(default=False, description="key or value kept as a prefix only")
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
            key=_prefix(key, KEY_KEPT),
            value=_prefix(value, VALUE_KEPT),
            key_size=None if key is None else len(key),
            value_size=None if value is None else len(value),
            key_sha256=None if key is None else hashlib.sha256(key).hexdigest(),
            value_sha256=None if value is None else hashlib.sha256(value).hexdigest(),
            truncated=(key is not None and len(key) > KEY_KEPT) or (value is not None and len(value) > VALUE_KEPT),
            error=_cut(str(error) or type(error).__name__),
            field=_cut(field) if field else None,
            stage=stage,
            failed_at=failed_at,
        )


def _prefix(raw: bytes | None, budget: int) -> bytes | None:
    return raw if raw is None or len(raw) <= budget else raw[:budget]


def _cut(text: str) -> str:
    return text if len(text) <= TEXT_KEPT else f"{text[:TEXT_KEPT]}… ({len(text)} characters)"
