"""The Faust codec of the state table's changelog: bytes through unchanged.

The changelog holds several record kinds (streams/state_changelog.py), which the table decodes
itself, by key, when it applies them; Faust must not guess a value's type first.
"""

from __future__ import annotations

from typing import Any

from faust.serializers import codecs

from streams.state_changelog import encode_state

CODEC_NAME = "om_state"


class KeyStateCodec(codecs.Codec):
    def _dumps(self, obj: Any) -> bytes:
        return obj if isinstance(obj, bytes) else encode_state(obj)

    def _loads(self, s: bytes) -> Any:
        return s


def register() -> None:
    if CODEC_NAME not in codecs.codecs:
        codecs.register(CODEC_NAME, KeyStateCodec())
