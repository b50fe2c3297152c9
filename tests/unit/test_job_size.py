"""Issue 18 item 2: jobs are bounded in bytes as well as tokens, and a job that cannot fit ends its
cycle as a failure instead of being sent (and dropped by the broker) while the cycle stays in flight.
"""

from __future__ import annotations

import orjson

from processors.config import OMConfig
from processors.observer.inputs import bounded_previous
from processors.observer.types import ObserverRequest, ObserverSettings
from processors.tokens import get_counter
from schemas.jobs import ObserveJob, ObserveResult, PendingReflection, decode_job
from schemas.lifecycle import decode_event
from schemas.messages import ChatMessage
from streams.fold import BatchFolder, InputRecord
from streams.job_size import fit_job
from streams.topics import Topics

TOPICS = Topics.for_prefix("om")
START = 1_733_000_000_000
LIMIT = 40_000
CONFIG = OMConfig.from_mastra({"observation": {"messageTokens": 1500, "bufferTokens": False}})
COUNTER = get_counter()


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


def _log(lines: int, salt: str) -> str:
    return "\n".join(f"* {'🔴' if i % 7 == 0 else '🟡'} (10:{i % 60:02d}) {salt} note {i}: " + _words(i)[:180]
                     for i in range(lines))


def _observe_job(**prior) -> ObserveJob:
    message = ChatMessage(id="m1", thread_id="t1", resource_id="r1", role="user", created_at=START,
                          parts=[{"type": "text", "text": _words(1)}])
    return ObserveJob(cycle_id="observe-1", key="thread:t1", thread_id="t1", resource_id="r1", record_id="rec",
                      generation=0, issued_at=START, mode="sync", messages=[message], tokens_to_observe=60, **prior)


def _shown(job: ObserveJob, budget: int) -> tuple[str, bool]:
    """What the Observer is shown of the job's prior log, as the worker that calls the model bounds it."""
    request = ObserverRequest(messages=job.messages, prior_observations=job.prior_observations,
                              buffered_observations=job.buffered_observations,
                              pending_reflection=job.pending_reflection,
                              previous_truncated=bool(job.previous_truncated),
                              settings=ObserverSettings(previous_observer_tokens=budget))
    return bounded_previous(request, COUNTER)


def test_a_job_too_big_for_its_prior_log_is_sent_with_the_log_as_the_observer_sees_it() -> None:
    """A threshold that lets the log outgrow the record limit must not fail every Observer cycle: the
    job carries the bounded log (chunks and a pending reflection folded in), and the prompt is the same."""
    job = _observe_job(prior_observations=_log(1_500, "active"), buffered_observations=[_log(40, "chunk")],
                       pending_reflection=PendingReflection(text=_log(30, "reflected"), line_count=600))
    assert len(job.to_bytes()) > 200_000
    folder = BatchFolder(CONFIG, TOPICS, record_limit=200_000)
    raw = fit_job(job, b"thread:t1", 200_000, folder._bound_previous)
    assert raw is not None and len(raw) < 50_000
    sent = decode_job(raw)
    assert sent.previous_truncated and not sent.buffered_observations and sent.pending_reflection is None
    assert _shown(sent, 2000) == _shown(job, 2000) and _shown(job, 2000)[1]
    assert sent.messages == job.messages


def test_a_job_that_fits_carries_the_log_whole() -> None:
    job = _observe_job(prior_observations=_log(300, "active"))
    raw = fit_job(job, b"thread:t1", 1_000_000, BatchFolder(CONFIG, TOPICS)._bound_previous)
    assert decode_job(raw) == job and b"previous_truncated" not in raw  # what older Observer workers read


def test_without_a_bound_an_oversized_prior_log_still_fails_the_cycle() -> None:
    unbounded = OMConfig.from_mastra({"observation": {"messageTokens": 1500, "previousObserverTokens": False}})
    folder = BatchFolder(unbounded, TOPICS, record_limit=200_000)
    assert folder._bound_previous is None
    job = _observe_job(prior_observations=_log(1_500, "active"))
    assert fit_job(job, b"thread:t1", 200_000, folder._bound_previous) is None


def test_an_answer_whose_effects_cannot_fit_ends_its_cycle_failed() -> None:
    """Its observation-end event (which carries the answer) is over the limit: refused as a dead letter,
    the result would leave the cycle in flight for good, and the thread would never observe again."""
    records = [_message(i, [{"type": "text", "text": _words(i)}]) for i in range(30)]
    folded, states, events, jobs = _fold(records)
    job = decode_job(jobs[0].value)
    answer = ObserveResult(cycle_id=job.cycle_id, key=job.key, generation=job.generation, mode=job.mode, ok=True,
                           started_at=START, completed_at=START + 1000, observations="* 🔴 noted " + "x" * 60_000)
    record = InputRecord(TOPICS.results, 0, 100, b"thread:t1", answer.to_bytes())
    after = BatchFolder(CONFIG, TOPICS, clock=lambda: START / 1000, record_limit=LIMIT).fold([record], states)
    kinds = [decode_event(o.value).type for o in after.outgoing if o.topic == TOPICS.events]
    assert "observation-failed" in kinds and "observation-end" not in kinds
    assert after.dead_letters == 0
    assert all(f.cycle_id != job.cycle_id for f in states["thread:t1"].in_flight), "the cycle ended"
    assert kinds.index("observation-start") > kinds.index("observation-failed"), "and the next one began"
    assert {m.id for m in states["thread:t1"].window} >= {m.id for m in job.messages}, "its messages unobserved"
    assert all(len(o.value) + len(o.key or b"") <= LIMIT for o in after.outgoing)
