"""The state machine's reflection side (spec §4.8) and the generation rollover fixes (P1, P6, cursor)."""

from processors.config import OMConfig
from schemas.control import ConfigOverride
from tests.unit.machine.core_driver import MINUTE, T0, Driver, message
from streams.harness.echo_model import respond

REFLECTIVE = {"observation": {"message_tokens": 1500}, "reflection": {"observation_tokens": 800}}
SYNC_ONLY = {"observation": {"message_tokens": 500, "buffer_tokens": False},
             "reflection": {"observation_tokens": 800}}


def talk_until_reflection(d: Driver):
    """Talk, answering every Observer job, until a reflection job is waiting; return it."""
    i = 0
    while not any(j.kind == "reflect" for j in d.jobs):
        d.feed(message(f"m{i}", T0 + i * MINUTE))
        i += 1
        for job in [x for x in d.jobs if x.kind == "observe"]:
            d.answer(job)
    return next(j for j in d.jobs if j.kind == "reflect")


def test_background_reflection_buffers_then_activates_into_a_new_generation() -> None:
    d = Driver(OMConfig.model_validate(REFLECTIVE))
    d.talk(200)
    starts = [e for e in d.events("buffering-start") if e.operation_type == "reflection"]
    activations = [e for e in d.events("activation") if e.operation_type == "reflection"]
    assert starts and activations
    assert d.state.record.generation >= 1 and d.state.record.origin_type == "reflection"
    assert activations[0].observation_tokens < activations[0].tokens_activated


def test_s41_new_generation_keeps_cursor_and_resets_counters() -> None:
    d = Driver(OMConfig.model_validate(SYNC_ONLY))
    d.talk(200)
    assert d.state.record.generation >= 1
    ends = [e for e in d.events("observation-end") if e.operation_type == "reflection"]
    assert ends and all(e.observation_tokens < e.tokens_observed for e in ends)
    record = d.state.record
    assert record.last_observed_at is not None and record.buffered_reflection is None


def test_p1_new_generation_keeps_buffered_chunks() -> None:
    """Mastra drops buffered chunks at a rollover and re-observes their messages later (P1)."""
    d = Driver(OMConfig.model_validate(REFLECTIVE))
    held = []
    for i in range(400):
        d.feed(message(f"m{i}", T0 + i * MINUTE, role="user" if i % 2 == 0 else "assistant"))
        for job in list(d.jobs):
            if job.kind == "reflect":
                d.jobs.remove(job)
                held.append(job)
            else:
                d.answer(job)
        chunks = d.state.record.buffered_chunks
        if held and chunks:
            generation = d.state.record.generation
            d.feed(respond(held.pop()))
            if d.state.record.generation > generation:
                assert d.state.record.buffered_chunks == chunks
                assert {m for c in chunks for m in c.message_ids} <= {m.id for m in d.state.window}
                return
    raise AssertionError("no rollover happened while chunks were buffered")


def test_reflection_keeps_lines_appended_while_it_ran() -> None:
    """Mastra's sync reflection committed its stale snapshot (P6); the tail must survive.

    A synchronous observation is in flight when a turn starts a synchronous reflection (the record's
    reflection threshold was lowered meanwhile); the observation's lines land while the Reflector runs.
    """
    d = Driver(OMConfig.model_validate({"observation": {"message_tokens": 500, "buffer_tokens": False},
                                        "reflection": {"observation_tokens": 40_000}}))
    i = 0
    while not d.state or not d.state.record.active_observations or not d.jobs:
        d.feed(message(f"m{i}", T0 + i * MINUTE, role="user" if i % 2 == 0 else "assistant"))
        i += 1
        if d.state.record.active_observations == "" and d.jobs:
            d.answer(d.jobs[0])
    (observe_job,) = d.jobs
    d.feed(ConfigOverride(thread_id="t1", resource_id="r1", at=T0 + i * MINUTE,
                          config={"reflection": {"observation_tokens": 10}}))
    d.feed(message(f"m{i}", T0 + i * MINUTE))
    (reflect_job,) = [j for j in d.jobs if j.kind == "reflect"]
    assert reflect_job.mode == "sync"
    tail_marker = f"[{observe_job.messages[-1].id}]"
    d.answer(observe_job)
    assert tail_marker in d.state.record.active_observations
    assert tail_marker not in reflect_job.observations
    d.answer(reflect_job)
    assert d.state.record.generation == 1
    assert tail_marker in d.state.record.active_observations

def test_cursor_never_moves_backward_across_reflection() -> None:
    d = Driver(OMConfig.model_validate(REFLECTIVE))
    cursors = []
    for i in range(200):
        d.feed(message(f"m{i}", T0 + i * MINUTE, role="user" if i % 2 == 0 else "assistant"))
        d.answer_all()
        cursors.append(d.state.record.last_observed_at or 0)
    assert cursors == sorted(cursors)


def test_stale_reflection_result_is_dropped() -> None:
    d = Driver(OMConfig.model_validate(SYNC_ONLY))
    job = talk_until_reflection(d)
    result = respond(job)
    stale = result.model_copy(update={"cycle_id": "reflect-unknown"})
    d.feed(stale)
    assert d.state.counters.stale_results == 1 and d.state.record.generation == 0
    d.answer(job)
    assert d.state.record.generation == 1


def test_s38_incompressible_reflection_is_not_repeated_at_the_same_size() -> None:
    d = Driver(OMConfig.model_validate(SYNC_ONLY))
    job = talk_until_reflection(d)
    d.jobs.remove(job)
    same = respond(job).model_copy(update={"observations": job.observations})
    d.feed(same)
    size = d.state.record.observation_token_count
    assert d.state.reflection_suppressed_at == size
    from schemas.control import TurnStart

    d.feed(TurnStart(thread_id="t1", resource_id="r1", at=T0 + 10_000 * MINUTE, model="openai/gpt-4o"))
    assert not any(j.kind == "reflect" for j in d.jobs)


def test_failed_background_reflection_can_start_again() -> None:
    d = Driver(OMConfig.model_validate(REFLECTIVE))
    job = talk_until_reflection(d)
    d.answer(job, ok=False)
    assert not d.state.reflection_buffer_started
    assert [e for e in d.events("buffering-failed") if e.operation_type == "reflection"]
