"""Issue 18 item 1: a dead letter always fits the broker's record limit, whatever it wraps.

Today's failure: a ~900 kB undecodable message became a 1.2 MB dead letter (base64), the broker
refused it, and the sink's task died on it. Here: the letter of any record is under
MAX_LETTER_BYTES and still identifies the original by size and digest.
"""

from __future__ import annotations

import hashlib

import orjson

from processors.config import OMConfig
from schemas.base import SchemaError, decode
from schemas.dlq import KEY_KEPT, MAX_LETTER_BYTES, VALUE_KEPT, DeadLetter
from streams.fold import BatchFolder, InputRecord
from streams.topics import Topics

AT = 1_733_000_000_000
HUGE = b"\xff" + b"x" * 900_000  # fits a 1 MB topic, undecodable


def test_an_oversized_value_is_kept_as_a_prefix_with_its_size_and_digest() -> None:
    letter = DeadLetter.from_failure(topic="om.messages.v1", partition=0, offset=7, key=b"thread:t1", value=HUGE,
                                     error=SchemaError("", "not valid JSON"), stage="decode", failed_at=AT)
    wire = letter.to_bytes()
    assert len(wire) <= MAX_LETTER_BYTES
    back = decode(DeadLetter, wire)
    assert back.truncated and back.value == HUGE[:VALUE_KEPT]
    assert back.value_size == len(HUGE) and back.value_sha256 == hashlib.sha256(HUGE).hexdigest()
    assert back.key == b"thread:t1" and back.key_size == 9


def test_a_huge_key_reason_and_field_are_cut_too() -> None:
    key = b"k" * 500_000
    letter = DeadLetter.from_failure(topic="t", partition=0, offset=0, key=key, value=HUGE,
                                     error=SchemaError("f" * 300_000, "r" * 300_000), stage="validate", failed_at=AT)
    assert len(letter.to_bytes()) <= MAX_LETTER_BYTES
    assert letter.key == key[:KEY_KEPT] and letter.key_size == len(key) and letter.truncated
    assert letter.error.endswith("characters)") and letter.field is not None and len(letter.field) < 2100


def test_a_small_record_is_kept_whole_and_not_marked_truncated() -> None:
    letter = DeadLetter.from_failure(topic="t", partition=0, offset=0, key=None, value=b"{bad",
                                     error=ValueError("x"), stage="decode", failed_at=AT)
    obj = orjson.loads(letter.to_bytes())
    assert letter.value == b"{bad" and not letter.truncated and obj["value_size"] == 4
    assert "key_size" not in obj and "key_sha256" not in obj


def test_the_processor_dead_letters_a_900_kb_undecodable_message_within_the_limit() -> None:
    topics = Topics.for_prefix("om")
    folded = BatchFolder(OMConfig(), topics, clock=lambda: AT / 1000).fold(
        [InputRecord(topics.messages, 0, 3, b"thread:t1", HUGE)], {})
    (out,) = folded.outgoing
    assert out.topic == topics.dlq and len(out.value) <= MAX_LETTER_BYTES
    assert decode(DeadLetter, out.value).value_size == len(HUGE)
