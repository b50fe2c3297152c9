"""Issue 18 items 4-5 without IO: which stored message rows the processor hides or freezes, and how
the sink's row versions rank them (streams/fold.py, streams/stored_messages.py, streams/sink/rows.py).
"""

from __future__ import annotations

import orjson
import pytest

from processors.config import OMConfig
from schemas.deltas import MessageInserted, MessageRefused, decode_delta
from schemas.jobs import decode_job
from schemas.messages import ChatMessage
from streams.fold import BatchFolder, InputRecord
from streams.harness.echo_model import respond
from streams.sink.rows import MESSAGE_COLUMNS, OBSERVED_VERSION, delta_rows, message_rows
from streams.stored_messages import NotMaterialised, stored_message
from streams.topics import Topics

TOPICS = Topics.for_prefix("om")
START = 1_733_000_000_000
CONFIG = OMConfig.from_mastra({"observation": {"messageTokens": 300, "bufferTokens": False}})
VERSION, REFUSED = MESSAGE_COLUMNS.index("version"), MESSAGE_COLUMNS.index("refused")


def _message(mid: str, at: int, text: str, resource: str = "r1", thread: str = "t1") -> ChatMessage:
    return ChatMessage(id=mid, thread_id=thread, resource_id=resource, role="user", created_at=at,
                       parts=[{"type": "text", "text": text}])


def _record(offset: int, message: ChatMessage, key: bytes = b"thread:t1", log_time: int | None = None) -> InputRecord:
    return InputRecord(TOPICS.messages, 0, offset, key, message.to_bytes(), log_time)


def _folder() -> BatchFolder:
    return BatchFolder(CONFIG, TOPICS, clock=lambda: START / 1000)


def _deltas(folded) -> list:
    return [decode_delta(o.value) for o in folded.outgoing if o.topic == TOPICS.records]


def _refusals(folded) -> list[MessageRefused]:
    return [d for d in _deltas(folded) if isinstance(d, MessageRefused)]


def _row(rows) -> list:
    (row,) = rows.rows["om_messages"]
    return row


def test_the_sink_stores_a_message_only_under_its_lookup_key_in_the_configured_scope() -> None:
    message = _message("m1", START, "hello")
    assert stored_message(b"thread:t1", message.to_bytes(), "thread") == message
    assert stored_message("resource:r1", message.to_bytes(), "resource") == message
    for key, scope in ((b"resource:r1", "thread"), (b"thread:t1", "resource"), (b"thread:t2", "thread"), (None, "thread")):
        with pytest.raises(NotMaterialised):
            stored_message(key, message.to_bytes(), scope)
    with pytest.raises(NotMaterialised):
        stored_message(b"thread:t1", b"\xff not json", "thread")


def test_a_message_for_a_thread_another_resource_owns_is_dead_lettered_and_its_stored_row_hidden() -> None:
    states: dict = {}
    own, intruder = _message("a1", START, "mine"), _message("b1", START + 1, "theirs", resource="r2")
    folded = _folder().fold([_record(0, own), _record(1, intruder)], states)
    assert folded.dead_letters == 1
    (refusal,) = _refusals(folded)
    assert (refusal.key, refusal.version, refusal.message_id, refusal.owner, refusal.held) == \
        ("thread:t1", 1, "b1", "r2", None)
    hidden = _row(delta_rows(refusal.to_bytes()))
    stored = _row(message_rows(b"thread:t1", intruder.to_bytes(), 1))
    assert hidden[:3] == stored[:3] == ["r2", "t1", "b1"], "the same row identity"
    assert hidden[VERSION] == stored[VERSION] + 1 and hidden[REFUSED] == 1 and stored[REFUSED] == 0
    later = _row(message_rows(b"thread:t1", intruder.to_bytes(), 2))
    assert later[VERSION] > hidden[VERSION], "a later record of the id is stored again"


def test_a_record_the_sink_never_stored_gets_no_refusal() -> None:
    misrouted = _message("a2", START, "keyed to another thread")
    folded = _folder().fold([_record(0, misrouted, key=b"thread:t9"), InputRecord(TOPICS.messages, 0, 1, b"thread:t1",
                                                                                  b"{not json")], {})
    assert folded.dead_letters == 2 and _refusals(folded) == []


def test_a_refused_re_send_of_an_unobserved_message_puts_its_row_back() -> None:
    states: dict = {}
    first = _message("a1", START, "the original")
    ahead = _message("a1", START + 10 * 365 * 86_400_000, "a rewrite from the future")
    folded = _folder().fold([_record(0, first, log_time=START), _record(1, ahead, log_time=START)], states)
    assert folded.dead_letters == 1
    (refusal,) = _refusals(folded)
    assert refusal.held == first
    restored = _row(delta_rows(refusal.to_bytes()))
    assert restored[REFUSED] == 0 and "the original" in restored[MESSAGE_COLUMNS.index("parts")]
    assert restored[VERSION] == 2 * 1 + 1


def _observed(folder: BatchFolder, states: dict):
    """Four messages folded and their first Observer job answered: (the job, the result's fold)."""
    filler = " ".join(f"fact{i} about the trip" for i in range(40))
    talk = [_message(f"a{i}", START + i * 1000, f"turn {i}: {filler}") for i in range(4)]
    folded = folder.fold([_record(i, m) for i, m in enumerate(talk)], states)
    (job,) = [decode_job(o.value) for o in folded.outgoing if o.topic == TOPICS.jobs]
    return job, folder.fold([InputRecord(TOPICS.results, 0, 0, b"thread:t1", respond(job).to_bytes())], states)


def test_observed_messages_are_frozen_above_every_topic_row_and_a_re_send_changes_nothing() -> None:
    states: dict = {}
    folder = _folder()
    job, folded = _observed(folder, states)
    frozen = [d for d in _deltas(folded) if isinstance(d, MessageInserted)]
    observed = {m.id for m in job.messages}
    assert frozen and all(d.observed for d in frozen) and {d.message.id for d in frozen} == observed
    copy = _row(delta_rows(frozen[0].to_bytes()))
    assert copy[VERSION] >= OBSERVED_VERSION > 2 * (2 ** 62 - 1) + 1, "above every offset's (and refusal's) row"

    rewrite = _message(frozen[0].message.id, frozen[0].message.created_at, "REWRITTEN")
    before = states["thread:t1"]
    folded = folder.fold([_record(9, rewrite)], states)
    assert folded.dead_letters == 0 and _refusals(folded) == []
    assert states["thread:t1"].counters.duplicate_messages == before.counters.duplicate_messages + 1
    assert _row(message_rows(b"thread:t1", rewrite.to_bytes(), 9))[VERSION] < copy[VERSION]


def test_an_observed_copy_over_the_record_limit_is_left_out_not_the_observation() -> None:
    states: dict = {}
    limit = 40_000
    folder = BatchFolder(CONFIG, TOPICS, clock=lambda: START / 1000, record_limit=limit)
    filler = " ".join(f"fact{i} about the trip" for i in range(40))
    talk = [_message(f"a{i}", START + i * 1000, f"turn {i}: {filler}") for i in range(4)]
    # the Observer never sees reasoning: the job leaves it out, the observed copy would carry it
    talk[0] = ChatMessage(id="a0", thread_id="t1", resource_id="r1", role="user", created_at=START,
                          parts=[{"type": "text", "text": f"turn 0: {filler}"}, {"type": "reasoning", "text": "r" * 50_000}])
    folded = folder.fold([_record(i, m) for i, m in enumerate(talk)], states)
    (job,) = [decode_job(o.value) for o in folded.outgoing if o.topic == TOPICS.jobs]
    folded = folder.fold([InputRecord(TOPICS.results, 0, 0, b"thread:t1", respond(job).to_bytes())], states)
    assert folded.dead_letters == 0 and folded.event_counts[("observation-end", "observation")] == 1
    copies = {d.message.id for d in _deltas(folded) if isinstance(d, MessageInserted)}
    assert "a0" not in copies and copies, "the long one is left out, the others frozen"
    assert all(len(o.value) + len(o.key or b"") <= limit for o in folded.outgoing)


def test_a_late_message_the_core_drops_is_hidden() -> None:
    states: dict = {}
    folder = _folder()
    _observed(folder, states)
    late = _message("old", START - 3 * 86_400_000, "three days before")
    folded = folder.fold([_record(7, late)], states)
    assert states["thread:t1"].counters.late_messages_dropped == 1 and folded.dead_letters == 0
    (refusal,) = _refusals(folded)
    assert (refusal.message_id, refusal.version, refusal.held) == ("old", 7, None)
    assert orjson.loads(refusal.to_bytes())["kind"] == "message-refused"
