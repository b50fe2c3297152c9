"""Issue 18 item 2: jobs are bounded in bytes as well as tokens, and a job that cannot fit ends its
cycle as a failure instead of being sent (and dropped by the broker) while the cycle stays in flight.
"""

from __future__ import annotations

import orjson

from processors.config import OMConfig
from schemas.jobs import decode_job
from schemas.lifecycle import decode_event
from schemas.messages import ChatMessage
from streams.fold import BatchFolder, InputRecord
from streams.topics import Topics

TOPICS = Topics.for_prefix("om")
START = 1_733_000_000_000
LIMIT = 40_000
CONFIG = OMConfig.from_mastra({"observation": {"messageTokens": 1500, "bufferTokens": False}})


def _message(i: int, parts: list[dict]) -> InputRecord:
    message = ChatMessage(id=f"m{i}", thread_id="t1", resource_id="r1", role="user" if i % 2 == 0 else "assistant",
                          created_at=START + i * 1000, parts=parts)
    return InputRecord(TOPICS.messages, 0, i, b"thread:t1", message.to_bytes())


def _fold(records: list[InputRecord], limit: int = LIMIT):
    states: dict = {}
    folded = BatchFolder(CONFIG, TOPICS, clock=lambda: START / 1000, record_limit=limit).fold(records, states)
    events = [decode_event(o.value) for o in folded.outgoing if o.topic == TOPICS.events]
    jobs = [o for o in folded.outgoing if o.topic == TOPICS.jobs]
    return folded, states, [e for e in events if e.type != "status"], jobs


def _words(i: int) -> str:
    return " ".join(f"word{i}x{j}" for j in range(40))


def test_reasoning_parts_the_model_never_sees_are_dropped_from_an_oversized_job() -> None:
    thinking = {"type": "reasoning", "text": "r" * 20_000}  # 0 tokens, 20 kB each
    records = [_message(i, [{"type": "text", "text": _words(i)}, thinking]) for i in range(30)]
    folded, states, events, jobs = _fold(records)
    assert [e.type for e in events] == ["observation-start"]
    (job,) = jobs
    assert len(job.value) + len(job.key) <= LIMIT
    sent = decode_job(job.value)
    assert all(p.type == "text" for m in sent.messages for p in m.parts), "only what the Observer renders"
    assert len(sent.messages) > 10
    assert states["thread:t1"].in_flight, "the cycle waits for the job it sent"


def test_a_job_that_cannot_fit_fails_its_cycle_instead_of_being_sent() -> None:
    records = [_message(i, [{"type": "text", "text": _words(i)}]) for i in range(30)]
    folded, states, events, jobs = _fold(records, limit=5_000)  # the first cycle's job is ~10 kB
    assert not jobs, "no job over the record limit is ever sent"
    kinds = [e.type for e in events]
    assert kinds[:2] == ["observation-start", "observation-failed"]
    failed = events[1]
    assert failed.cycle_id == events[0].cycle_id and "over the broker's record limit" in failed.error
    assert not any(f.cycle_id == failed.cycle_id for f in states["thread:t1"].in_flight), "not in flight forever"
    assert all(len(o.value) + len(o.key or b"") <= 5_000 for o in folded.outgoing)
    assert folded.dead_letters == 0


def test_any_other_record_over_the_limit_refuses_its_input_and_leaves_the_state() -> None:
    message = _message(0, [{"type": "text", "text": "hello"}])
    folded = BatchFolder(CONFIG, TOPICS, clock=lambda: START / 1000, record_limit=300).fold([message], {})
    # its status event (~400 bytes) does not fit: only the dead letter is sent, and the refusal that
    # hides the row the sink stored for the message
    letter, refusal = folded.outgoing
    assert letter.topic == TOPICS.dlq and folded.changed == {}
    assert "record limit" in orjson.loads(letter.value)["error"]
    assert refusal.topic == TOPICS.records and orjson.loads(refusal.value)["kind"] == "message-refused"
