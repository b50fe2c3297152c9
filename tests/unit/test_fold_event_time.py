"""Issue 18 item 3: time and keys are validated where a record enters the processor.

A message dated +10 years moved the key's clock and cursor, so every later message was dropped as
"late"; ``created_at`` ≥ 2^63 poisoned the thread's status rows; a record without a key was folded.
Each is now a dead letter naming the field, and the key's state is untouched.
"""

from __future__ import annotations

import pytest

from processors.config import OMConfig
from schemas.base import decode
from schemas.control import ThreadDeleted
from schemas.dlq import DeadLetter
from schemas.jobs import ObserveResult
from schemas.messages import ChatMessage, TextPart
from streams.fold import MAX_LEAD_MS, BatchFolder, InputRecord
from streams.topics import Topics

TOPICS = Topics.for_prefix("om")
NOW = 1_767_600_000_000
YEAR = 365 * 24 * 3_600_000


def _message(mid: str, at: int) -> bytes:
    return ChatMessage(id=mid, thread_id="t1", resource_id="r1", role="user", created_at=at,
                       parts=[TextPart(text="hello")]).to_bytes()


def _fold(*records: InputRecord, states=None):
    states = {} if states is None else states
    return BatchFolder(OMConfig(), TOPICS, clock=lambda: NOW / 1000).fold(list(records), states), states


def _letters(result) -> list[DeadLetter]:
    return [decode(DeadLetter, o.value) for o in result.outgoing if o.topic == TOPICS.dlq]


def test_a_message_dated_ten_years_ahead_is_refused_and_later_messages_still_count() -> None:
    ahead = InputRecord(TOPICS.messages, 0, 1, b"thread:t1", _message("future", NOW + 10 * YEAR), NOW)
    result, states = _fold(ahead)
    (letter,) = _letters(result)
    assert letter.field == "created_at" and "after the record's log time" in letter.error
    assert "thread:t1" not in states
    result, states = _fold(InputRecord(TOPICS.messages, 0, 2, b"thread:t1", _message("now", NOW), NOW + 5))
    assert _letters(result) == [] and [m.id for m in states["thread:t1"].window] == ["now"]


def test_clock_skew_within_the_tolerance_and_history_are_accepted() -> None:
    skewed = InputRecord(TOPICS.messages, 0, 1, b"thread:t1", _message("skew", NOW + MAX_LEAD_MS), NOW)
    old = InputRecord(TOPICS.messages, 0, 2, b"thread:t1", _message("old", NOW - 3 * YEAR), NOW)
    result, states = _fold(skewed, old)
    assert _letters(result) == [] and {m.id for m in states["thread:t1"].window} == {"skew", "old"}


def test_a_deletion_dated_in_the_future_is_refused_and_does_not_blackhole_the_thread() -> None:
    deletion = ThreadDeleted(thread_id="t1", resource_id="r1", at=NOW + YEAR).to_bytes()
    result, _ = _fold(InputRecord(TOPICS.control, 0, 1, b"thread:t1", deletion, NOW))
    assert [letter.field for letter in _letters(result)] == ["at"]


@pytest.mark.parametrize("at", [2**63, 2**63 + 5, 10**20])
def test_an_epoch_beyond_the_year_9999_is_refused_at_decoding(at: int) -> None:
    raw = _message("x", 1).replace(b'"created_at":1', f'"created_at":{at}'.encode())
    result, states = _fold(InputRecord(TOPICS.messages, 0, 1, b"thread:t1", raw, NOW))
    (letter,) = _letters(result)
    assert letter.field is not None and "created_at" in letter.field and states == {}


def test_a_record_without_a_key_is_refused() -> None:
    result, states = _fold(InputRecord(TOPICS.messages, 0, 1, None, _message("m", NOW), NOW))
    (letter,) = _letters(result)
    assert letter.field == "key" and states == {}


def test_a_result_for_a_key_without_state_is_dropped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    result = ObserveResult(cycle_id="buffer-obs-1", key="thread:t1", generation=0, ok=True, started_at=NOW,
                           completed_at=NOW, mode="buffer", observations="* a note")
    with caplog.at_level("WARNING", logger="streams.fold"):
        folded, states = _fold(InputRecord(TOPICS.results, 3, 7, b"thread:t1", result.to_bytes(), NOW))
    assert folded.outgoing == [] and states == {} and folded.results_without_state == 1
    [warning] = [r for r in caplog.records if r.getMessage() == "om.fold.result_without_state"]
    assert (warning.partition, warning.offset, warning.cycle_id) == (3, 7, "buffer-obs-1")
