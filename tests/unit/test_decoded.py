"""streams/decoded.py: the embedded sink takes what the fold decoded or encoded, and gets the same rows.

The rule under test is that a record taken from the memo turns into exactly the rows its decoding
would give: a conversation with observations and reflections is folded (the echo model answering
every job), and every record the sink would read — the messages in, the events and deltas out — is
turned into rows once with the memo on and once decoding, and the two are compared.
"""

from __future__ import annotations

import pytest

from bench.corpus import messages
from processors.config import OMConfig
from schemas.jobs import decode_job
from streams.decoded import Decoded, DECODED
from streams.fold import BatchFolder, InputRecord
from streams.harness.echo_model import respond
from streams.sink.rows import delta_rows, event_rows, message_rows
from streams.topics import Topics

TOPICS = Topics.for_prefix("om")
SMALL = OMConfig.model_validate({"observation": {"messageTokens": 1_500, "bufferTokens": False},
                                 "reflection": {"observationTokens": 600}})


def test_off_it_keeps_nothing_and_on_it_hands_each_record_out_once_of_its_own_kind() -> None:
    memo = Decoded(capacity=2)
    memo.leave("message", b"a", "A")
    assert memo.take("message", b"a") is None  # off: the sink is another process
    memo.on = True
    memo.leave("message", b"a", "A")
    memo.leave("event", b"b", "B")
    assert memo.take("event", b"a") is None  # the bytes of another topic's record: decode it
    memo.leave("message", b"a", "A")
    assert memo.take("message", b"a") == "A" and memo.take("message", b"a") is None
    for value in (b"c", b"d", b"e"):
        memo.leave("delta", value, value.upper())
    assert memo.take("delta", b"c") is None, "the oldest is pushed out past the capacity"
    assert (memo.take("delta", b"d"), memo.take("delta", b"e")) == (b"D", b"E")
    assert memo.take("delta", None) is None


def _sink_records(folder: BatchFolder) -> list[tuple[str, bytes, bytes]]:
    """(topic, key, value) of every record the sink reads, in order, for a folded conversation."""
    states: dict = {}
    seen: list[tuple[str, bytes, bytes]] = []
    pending = [InputRecord(TOPICS.messages, 0, offset, f"thread:{m.thread_id}".encode(), m.to_bytes(), m.created_at)
               for offset, m in enumerate(messages(3, 40, salt="decoded"))]
    offset = len(pending)
    while pending:
        record = pending.pop(0)
        seen.append((record.topic, record.key, record.value))
        result = folder.fold([record], states)
        for out in result.outgoing:
            if out.topic == TOPICS.jobs:
                answer = respond(decode_job(out.value))
                offset += 1
                pending.append(InputRecord(TOPICS.results, 0, offset, out.key, answer.to_bytes(), answer.completed_at))
            elif out.topic in (TOPICS.events, TOPICS.records):
                seen.append((out.topic, out.key, out.value))
    return seen


def _rows(topic: str, key: bytes, value: bytes, offset: int):
    if topic == TOPICS.messages:
        return message_rows(key, value, offset).rows
    if topic == TOPICS.events:
        return event_rows(key.decode(), value, offset).rows
    if topic == TOPICS.records:
        return delta_rows(value).rows
    return None


@pytest.fixture
def memo_on():
    DECODED.on = True
    try:
        yield DECODED
    finally:
        DECODED.on = False
        DECODED.clear()


def test_the_sink_gets_the_rows_its_own_decoding_gives(memo_on: Decoded) -> None:
    records = _sink_records(BatchFolder(SMALL, TOPICS))
    assert {kind for kind, _ in memo_on._items.values()} == {"message", "event", "delta"}
    taken = [_rows(topic, key, value, offset) for offset, (topic, key, value) in enumerate(records)]
    assert not memo_on._items, "the sink took every record the fold left"
    memo_on.on = False
    decoded = [_rows(topic, key, value, offset) for offset, (topic, key, value) in enumerate(records)]
    assert taken == decoded
    tables = {table for rows in decoded if rows for table in rows}
    assert {"om_messages", "om_events", "om_records", "om_message_observations"} <= tables, tables


def test_a_message_the_sink_decoded_first_is_the_folds_to_take(memo_on: Decoded) -> None:
    (first,) = messages(1, 1, salt="sink-first")
    value = first.to_bytes()
    stored = message_rows(b"thread:" + first.thread_id.encode(), value, 0)
    assert memo_on.take("message", value) is not None, "the sink left what it decoded"
    message_rows(b"thread:" + first.thread_id.encode(), value, 0)  # leaves it again
    result = BatchFolder(SMALL, TOPICS).fold(
        [InputRecord(TOPICS.messages, 0, 0, b"thread:" + first.thread_id.encode(), value, first.created_at)], {})
    assert all(kind != "message" for kind, _ in memo_on._items.values()), "the fold took it"
    assert result.changed and stored.rows["om_messages"][0][2] == first.id
