"""A Mastra store written by real Mastra 1.31 imports into the core as ``record-import`` events (issue 22).

The fixture (tests/fixtures/mastra_store, made by make_store.mjs) holds generation 1 with generation 0
as history, a buffered chunk, a buffered reflection, continuation hints, a title and working memory;
its expected.json keeps what Mastra showed the actor on the next turn.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from processors.config import OMConfig
from processors.context import build_context
from processors.machine import decide
from schemas.control import decode_control
from schemas.deltas import MessageInserted, MessagesObserved, RecordSnapshot
from schemas.jobs import ObserveJob
from schemas.messages import ChatMessage, TextPart
from streams.replay.mastra_om import ImportTally
from streams.replay.mastra_sources import MastraSQLiteSource

FIXTURES = Path(__file__).parents[2] / "fixtures" / "mastra_store"
STORE = FIXTURES / "mastra-1.31.db"
EXPECTED = json.loads((FIXTURES / "mastra-1.31.expected.json").read_text())
NEXT_TURN_AT = 1_767_607_380_000  # 2026-01-05T10:03Z, the minute after the store's last turn
CONFIG = OMConfig.from_mastra({"model": "openai/mock", "observation": {"messageTokens": 2000, "threadTitle": True},
                               "reflection": {"observationTokens": 3000}})


def fold(events, state=None):
    jobs, deltas = [], []
    for event in events:
        decision = decide(state, event, CONFIG)
        assert decision.rejection is None, decision.rejection
        state = decision.state
        jobs.extend(decision.jobs)
        deltas.extend(decision.deltas)
    return state, jobs, deltas


@pytest.fixture(scope="module")
def parts():
    return list(MastraSQLiteSource(STORE).imports(ImportTally()))


def mastra_unobserved_texts() -> list[str]:
    """What Mastra's actor saw as conversation: minus its continuation reminder, the working-memory
    state signals (delivered as a system block here) and the probe question that asked for it."""
    kept = [m["text"] for m in EXPECTED["actorConversation"]
            if not m["text"].startswith(("<system-reminder>", "<working-memory", "Turn 0 from the user"))]
    assert len(kept) == 3
    return kept


def test_the_import_reproduces_mastras_record_and_issues_no_model_call(parts) -> None:
    state, jobs, deltas = fold(decode_control(p.to_bytes()) for p in parts)  # through the wire format
    record = state.record
    assert jobs == []
    assert record.active_observations == EXPECTED["activeObservations"]
    assert (record.generation, record.origin_type) == (EXPECTED["generationCount"], "reflection")
    assert record.last_observed_at == 1_767_604_860_011  # lastObservedAt 2026-01-05T09:21:00.011Z
    assert len(record.buffered_chunks) == EXPECTED["bufferedChunks"] == 1
    assert record.buffered_reflection and record.reflected_observation_line_count == 38
    assert record.working_memory == EXPECTED["workingMemory"]
    meta = state.threads[EXPECTED["threadId"]]
    assert meta.thread_title == EXPECTED["title"]
    assert (meta.current_task, meta.suggested_response) == (EXPECTED["omMetadata"]["currentTask"],
                                                            EXPECTED["omMetadata"]["suggestedResponse"])
    assert [m.parts[0].text for m in state.window] == mastra_unobserved_texts()
    snapshots = [d for d in deltas if isinstance(d, RecordSnapshot)]
    assert [s.record.generation for s in snapshots] == [0, 1]  # history first, then the head
    assert snapshots[-1].unobserved_message_ids == [m.id for m in state.window]
    inserted = {d.message.id for d in deltas if isinstance(d, MessageInserted)}
    assert len(inserted) == 45  # every message reaches the messages table; 21 state signals skipped
    (observed,) = [d for d in deltas if isinstance(d, MessagesObserved)]  # the reader's window excludes these
    assert set(observed.message_ids) == inserted - {m.id for m in state.window} and len(observed.message_ids) == 42


def test_the_context_after_the_import_is_what_mastra_showed_its_actor(parts) -> None:
    state, _, _ = fold(parts)
    context = build_context(state.record.active_observations, list(state.window), NEXT_TURN_AT,
                            meta=state.threads[EXPECTED["threadId"]], working_memory=state.record.working_memory)
    mastra = EXPECTED["actorSystemPrompt"]
    # our preamble is our own words; from <observations> on, Mastra's system prompt and ours agree exactly
    assert "\n".join(context.system[1:-1]) == mastra[mastra.index("<observations>"):]
    assert context.system[-1] == f"<working-memory>\n{EXPECTED['workingMemory']}\n</working-memory>"
    assert [m.parts[0].text for m in context.messages] == mastra_unobserved_texts()


def test_importing_again_changes_nothing(parts) -> None:
    state, _, _ = fold(parts)
    again, jobs, _ = fold(parts, state)
    assert jobs == []
    assert again.window == state.window and again.record.active_observations == state.record.active_observations
    assert again.record.buffered_chunks == state.record.buffered_chunks
    assert again.counters.duplicate_messages == len(parts[0].unobserved) + sum(
        1 for m in parts[0].observed if m.id in state.observed)


def test_a_key_that_already_has_memory_refuses_an_import(parts) -> None:
    first = parts[0].unobserved[0]
    state, _, _ = fold([first])
    decision = decide(state, parts[0], CONFIG)
    assert decision.rejection is not None and decision.rejection.field == "record"
    assert "already has memory" in decision.rejection.reason


def test_a_record_of_another_scope_is_refused_naming_both(parts) -> None:
    resource = OMConfig.from_mastra({"model": "openai/mock", "scope": "resource"})
    part = parts[0].model_copy(update={"key": "resource:fixture-user"})
    decision = decide(None, part, resource)
    assert decision.rejection is not None and decision.rejection.field == "record.scope"
    assert "thread-scoped" in decision.rejection.reason and "'resource'" in decision.rejection.reason


def test_a_later_part_without_its_record_is_refused(parts) -> None:
    orphan = parts[0].model_copy(update={"part": 1, "parts": 2, "record": None})
    decision = decide(None, orphan, CONFIG)
    assert decision.rejection is not None and decision.rejection.field == "import_id"


def test_the_next_turn_continues_from_mastras_state_and_never_reobserves(parts) -> None:
    state, _, _ = fold(parts)
    observed = {m.id for m in parts[0].observed}
    words = " ".join(re.findall(r"\w+", EXPECTED["activeObservations"])[:420])
    turn = ChatMessage(id="next-user", thread_id=EXPECTED["threadId"], resource_id=EXPECTED["resourceId"],
                       role="user", created_at=NEXT_TURN_AT, parts=[TextPart(text=f"Turn 23 from the user: {words}")])
    later, jobs, _ = fold([turn], state)
    assert jobs, "a ~500-token message past Mastra's buffer boundary starts the next cycle"
    for job in jobs:
        assert isinstance(job, ObserveJob)
        assert not {m.id for m in job.messages} & observed
        assert job.prior_observations == EXPECTED["activeObservations"]
        # Mastra's chunk still covers A21 and U22: only the messages after it are buffered again
        assert {m.id for m in job.messages} <= {m.id for m in later.window} - later.chunked_ids()
