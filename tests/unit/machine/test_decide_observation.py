"""The state machine's observation side: buffering, activation, sync observation (spec §4.2–4.7)."""

from processors.config import OMConfig
from processors.machine.decide import decide
from schemas.control import IdleTick, TurnStart
from schemas.messages import ToolInvocationPart
from tests.unit.machine.core_driver import MINUTE, T0, Driver, message

SMALL = {"observation": {"message_tokens": 3000}}  # buffer 600, floor 600, block_after 3600


def small(**extra: object) -> OMConfig:
    cfg = {"observation": {**SMALL["observation"], **extra.pop("observation", {})}, **extra}
    return OMConfig.model_validate(cfg)


def test_first_buffering_cycle_starts_at_the_first_interval() -> None:
    d = Driver(small())
    d.talk(8, answer=False)
    assert d.events("buffering-start") == []
    d.feed(message("m8", T0 + 8 * MINUTE))
    (start,) = d.events("buffering-start")
    (job,) = d.jobs
    assert job.mode == "buffer" and job.cycle_id.startswith("buffer-obs-")
    assert start.cycle_id == job.cycle_id and [m.id for m in job.messages] == [f"m{i}" for i in range(9)]
    assert job.continuation_hints is False


def test_s16_buffered_chunk_keeps_messages_visible_until_activation() -> None:
    d = Driver(small())
    d.talk(9, answer=False)
    job = d.jobs[0]
    d.answer(job)
    (chunk,) = d.state.record.buffered_chunks
    newest = max(m.created_at for m in job.messages)
    assert chunk.cycle_id == job.cycle_id and chunk.last_observed_at == newest + 1
    assert chunk.message_ids == tuple(m.id for m in job.messages)
    assert len(d.state.window) == 9, "buffered messages stay in context until activated"
    assert d.state.record.last_buffered_at_time == newest + 1
    (end,) = d.events("buffering-end")
    assert end.message_ids == list(chunk.message_ids) and end.range == "m0:m8"


def test_s15_buffer_below_half_interval_is_skipped() -> None:
    d = Driver(small())
    d.talk(9, answer=False)
    d.answer(d.jobs[0])
    d.talk(3, start=T0 + 9 * MINUTE, prefix="n", answer=False)
    assert d.jobs == [], "the next interval is not reached yet"


def test_s17_duplicate_result_is_dropped_and_counted() -> None:
    d = Driver(small())
    d.talk(9, answer=False)
    job = d.jobs[0]
    from streams.harness.echo_model import respond

    result = respond(job)
    d.feed(result)
    before = d.state.record
    decision = d.feed(result)
    assert d.state.record.buffered_chunks == before.buffered_chunks
    assert d.state.counters.duplicate_results == 1
    assert decision.jobs == ()


def test_activation_at_threshold_appends_chunks_and_drops_their_messages() -> None:
    d = Driver(small())
    d.talk(100)
    record = d.state.record
    activations = d.events("activation")
    assert len({a.at for a in activations}) >= 2, "two activation rounds"
    observed = {mid for a in activations for mid in a.message_ids}
    assert observed.isdisjoint(m.id for m in d.state.window)
    assert record.active_observations.count("--- message boundary (") == len({a.at for a in activations}) - 1
    assert all(a.triggered_by == "threshold" for a in activations)
    assert d.state.pending_tokens() < 3000


def test_s24_activation_clears_continuation_hints_and_moves_cursor_to_last_chunk() -> None:
    d = Driver(small())
    d.talk(60)
    last = d.events("activation")[-1]
    newest = max(int(mid[1:]) for mid in last.message_ids)
    assert d.state.record.last_observed_at == T0 + newest * MINUTE + 1
    meta = d.state.threads["t1"]
    assert meta.current_task is None and meta.suggested_response is None


def test_s25_idle_ttl_activates_chunks_after_the_ttl_only() -> None:
    for gap, expected in ((301_000, True), (299_000, False)):
        d = Driver(small(activate_after_idle=300_000))
        d.talk(10, answer=False)
        d.answer(d.jobs[0])
        assert d.state.record.buffered_chunks
        last = d.state.last_activity_at
        d.feed(IdleTick(key="thread:t1", at=last + gap))
        activations = d.events("activation")
        assert bool(activations) is expected
        if expected:
            assert activations[0].triggered_by == "ttl" and activations[0].ttl_expired_ms >= 300_000


def test_s26_provider_change_activates_at_turn_start() -> None:
    d = Driver(small(activate_on_provider_change=True))
    d.feed(message("a0", T0, role="assistant", model="openai/gpt-4o"))
    d.talk(10, start=T0 + MINUTE, answer=False)
    d.answer(d.jobs[0])
    d.feed(TurnStart(thread_id="t1", resource_id="r1", at=T0 + 20 * MINUTE, model="openai.responses/gpt-4o"))
    assert d.events("activation") == []
    d.feed(TurnStart(thread_id="t1", resource_id="r1", at=T0 + 21 * MINUTE, model="anthropic/claude-x"))
    (activation, *_) = d.events("activation")
    assert activation.triggered_by == "provider_change"
    assert activation.previous_model == "openai/gpt-4o" and activation.current_model == "anthropic/claude-x"


def test_s28_sync_observation_when_buffering_is_off() -> None:
    d = Driver(OMConfig.model_validate({"observation": {"message_tokens": 500, "buffer_tokens": False}}))
    d.talk(9, answer=False)
    (job,) = [j for j in d.jobs if j.kind == "observe"]
    assert job.mode == "sync" and d.events("observation-start")
    d.answer(job)
    newest = max(m.created_at for m in job.messages)
    assert d.state.record.last_observed_at == newest, "sync cursor has no +1 ms"
    assert d.state.record.active_observations
    assert {m.id for m in job.messages}.isdisjoint(m.id for m in d.state.window)


def test_s29_pending_tool_call_postpones_sync_observation() -> None:
    d = Driver(OMConfig.model_validate({"observation": {"message_tokens": 500, "buffer_tokens": False}}))
    d.talk(7, answer=False)
    call = message("tool", T0 + 7 * MINUTE, role="assistant")
    call = call.model_copy(update={"parts": call.parts + [ToolInvocationPart(tool_call_id="c1", tool_name="s")]})
    d.feed(call)
    assert d.jobs == []
    done = call.model_copy(update={"parts": call.parts[:-1] + [ToolInvocationPart(
        tool_call_id="c1", tool_name="s", state="result", result="ok")]})
    d.feed(done)
    assert [j.mode for j in d.jobs] == ["sync"]


def test_s30_nothing_new_means_no_second_observation() -> None:
    d = Driver(OMConfig.model_validate({"observation": {"message_tokens": 500, "buffer_tokens": False}}))
    d.talk(9)
    count = len(d.events("observation-end"))
    d.feed(TurnStart(thread_id="t1", resource_id="r1", at=T0 + 60 * MINUTE, model="openai/gpt-4o"))
    assert len(d.events("observation-end")) == count and d.jobs == []


def test_failed_sync_observation_keeps_messages_and_retries_on_next_message() -> None:
    d = Driver(OMConfig.model_validate({"observation": {"message_tokens": 500, "buffer_tokens": False}}))
    d.talk(9, answer=False)
    d.answer(d.jobs[0], ok=False)
    assert d.events("observation-failed") and len(d.state.window) == 9
    d.feed(message("late", T0 + 30 * MINUTE))
    assert [j.mode for j in d.jobs] == ["sync"]


def test_late_message_is_not_silently_observed() -> None:
    """Mastra treats a message older than the cursor as observed (spec §12.12); we keep it."""
    d = Driver(OMConfig.model_validate({"observation": {"message_tokens": 500, "buffer_tokens": False}}))
    d.talk(9)
    cursor = d.state.record.last_observed_at
    d.feed(message("straggler", cursor - MINUTE))
    assert "straggler" in [m.id for m in d.state.window]


def test_replayed_message_is_a_counted_duplicate() -> None:
    d = Driver(OMConfig.model_validate({"observation": {"message_tokens": 500, "buffer_tokens": False}}))
    d.talk(9)
    d.feed(message("m0", T0))
    d.feed(message("m7", T0 + 7 * MINUTE, role="assistant"))
    assert d.state.counters.duplicate_messages == 2
    assert "m0" not in [m.id for m in d.state.window]


def test_thread_owned_by_another_resource_is_rejected() -> None:
    d = Driver(small())
    d.feed(message("a", T0))
    decision = d.feed(message("b", T0 + 1, resource="intruder"))
    assert decision.rejection is not None and decision.rejection.field == "resource_id"
    assert "r1" in decision.rejection.reason and [m.id for m in d.state.window] == ["a"]


def test_read_only_observes_nothing() -> None:
    d = Driver(OMConfig.model_validate({"read_only": True, "observation": {"message_tokens": 500}}))
    d.talk(20)
    assert d.events() == [] and len(d.state.window) == 20


def test_temporal_gap_marker_precedes_the_message() -> None:
    d = Driver(small(temporal_markers=True))
    d.feed(message("a", T0))
    d.feed(message("b", T0 + 9 * MINUTE + 59_000, role="assistant"))
    d.feed(message("c", T0 + 30 * MINUTE))
    ids = [m.id for m in d.state.window]
    assert ids == ["a", "b", "__temporal_gap_c", "c"]
    marker = d.state.window[2]
    assert marker.created_at == T0 + 30 * MINUTE - 1
    assert marker.parts[0].text.startswith("20 minutes later")


def test_config_override_lowers_the_threshold_for_one_thread() -> None:
    from schemas.control import ConfigOverride

    d = Driver(OMConfig.model_validate({"observation": {"buffer_tokens": False}}))
    d.talk(8, answer=False)
    assert d.jobs == []
    d.feed(ConfigOverride(thread_id="t1", resource_id="r1", at=T0 + 9 * MINUTE,
                          config={"observation": {"message_tokens": 400}}))
    assert [j.mode for j in d.jobs] == ["sync"]


def test_unknown_key_results_and_ticks_create_no_state() -> None:
    cfg = small()
    assert decide(None, IdleTick(key="thread:nobody", at=T0), cfg).state is None


def test_thread_deletion_drops_state_and_later_results() -> None:
    from schemas.control import ThreadDeleted

    d = Driver(small())
    d.talk(9, answer=False)
    job = d.jobs.pop()
    decision = d.feed(ThreadDeleted(thread_id="t1", resource_id="r1", at=T0 + 60 * MINUTE))
    assert decision.state is None and decision.deltas[0].kind == "key-deleted"
    from streams.harness.echo_model import respond

    assert decide(None, respond(job), d.config).state is None


def test_s19_turn_end_buffers_only_with_async_buffering_and_buffer_on_idle() -> None:
    from schemas.control import TurnEnd

    end = TurnEnd(thread_id="t1", resource_id="r1", at=T0 + 10 * MINUTE)
    for cfg, expected in ((small(observation={"buffer_on_idle": True}), ["buffer"]), (small(), []),
                          (OMConfig.model_validate({"observation": {"buffer_tokens": False, "buffer_on_idle": True}}),
                           [])):
        d = Driver(cfg)
        d.talk(3, answer=False)
        d.feed(end)
        assert [j.mode for j in d.jobs] == expected


def test_s27_stale_boundary_resets_and_buffering_resumes() -> None:
    d = Driver(OMConfig())
    d.talk(100, answer=False)
    state = d.state
    pending = state.pending_tokens()
    assert 6000 < pending < 10000
    d.state = state.model_copy(update={"in_flight": (), "record": state.record.model_copy(
        update={"last_buffered_at_tokens": 20000})})
    d.jobs.clear()
    d.feed(message("late", T0 + 200 * MINUTE))
    assert d.state.record.last_buffered_at_tokens == d.state.pending_tokens()
    assert [j.mode for j in d.jobs] == ["buffer"]


def test_observed_ids_are_kept_only_within_the_late_tolerance() -> None:
    from processors.machine.state import LATE_TOLERANCE_MS

    d = Driver(OMConfig.model_validate({"observation": {"message_tokens": 500, "buffer_tokens": False}}))
    d.talk(9, step=LATE_TOLERANCE_MS // 4)
    assert d.state.record.last_observed_at is not None
    horizon = d.state.record.last_observed_at - LATE_TOLERANCE_MS
    assert d.state.observed and all(at > horizon for at in d.state.observed.values())
    d.feed(message("m0", T0))  # observed long ago: forgotten by id, still refused by age
    assert "m0" not in [m.id for m in d.state.window]
    assert d.state.counters.late_messages_dropped == 1


def test_retrieval_wraps_each_cycle_in_an_observation_group_with_its_range() -> None:
    from processors.context import build_context
    from processors.recall.groups import parse_observation_groups

    d = Driver(OMConfig.model_validate({"retrieval": True, "observation": {"message_tokens": 3000}}))
    d.talk(60)
    groups = parse_observation_groups(d.state.record.active_observations)
    activated = [e for e in d.events("activation")]
    assert len(groups) == len(activated) and groups[0].range == activated[0].range
    context = build_context(d.state.record.active_observations, [], T0 + 100 * MINUTE,
                            retrieval_instructions="Use recall for exact wording.")
    assert any(block.startswith(f"## Group `{groups[0].id}`") for block in context.system)
    assert not any("<observation-group" in block for block in context.system)


def test_working_memory_from_the_observer_is_kept_on_the_record_and_sent_back() -> None:
    from processors.context import build_context
    from streams.harness.echo_model import respond

    d = Driver(OMConfig.model_validate({"observation": {"message_tokens": 500, "buffer_tokens": False,
                                                        "manage_working_memory": True}}))
    d.talk(9, answer=False)
    job = d.jobs.pop()
    assert job.working_memory is None
    block = "# Working memory\n- **Name**: Maya"
    d.feed(respond(job).model_copy(update={"extracted_values": {"working-memory": block, "mood": "calm"}}))
    assert d.state.record.working_memory == block and d.state.record.working_memory_version == 1
    assert d.state.threads["t1"].extracted == {"mood": "calm"}, "the block is not an ordinary extracted value"
    d.talk(9, start=T0 + 60 * MINUTE, prefix="n", answer=False)
    assert d.jobs[-1].working_memory == block
    context = build_context(d.state.record.active_observations, [], T0, working_memory=block)
    assert context.system[-1] == f"<working-memory>\n{block}\n</working-memory>"
    without = build_context(d.state.record.active_observations, [], T0)
    assert context.system[:-1] == without.system, "the observation prefix is unchanged"
