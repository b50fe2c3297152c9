"""The Faust codec of the state table: a :class:`KeyState` as compact JSON in the changelog."""

from __future__ import annotations

from typing import Any

import orjson
from faust.serializers import codecs

from processors.machine import KeyState

CODEC_NAME = "om_state"


class KeyStateCodec(codecs.Codec):
    def _dumps(self, obj: Any) -> bytes:
        return obj.to_bytes()

    def _loads(self, s: bytes) -> Any:
        return KeyState.from_obj(orjson.loads(s))


def register() -> None:
    if CODEC_NAME not in codecs.codecs:
        codecs.register(CODEC_NAME, KeyStateCodec())
