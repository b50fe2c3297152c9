"""When the worker's timer wakes a quiet key (processors/machine/idle_ticks.py), and that it wakes it once
per reason, not on every check."""

from __future__ import annotations

from typing import Any

from processors.config import OMConfig
from processors.machine.idle_ticks import idle_settings, idle_tick_reason, idle_tick_times
from processors.machine.state import KeyState
from schemas.record import BufferedChunk
from tests.unit.machine.core_driver import T0
from tests.unit.machine.test_reflection_early_triggers import idle_for

TTL = 300_000


def config(**options: Any) -> OMConfig:
    return OMConfig.model_validate(options)


def with_chunk(state: KeyState, chunk_id: str = "c1") -> KeyState:
    chunk = BufferedChunk(id=chunk_id, cycle_id=f"buf-{chunk_id}", observations="* note", token_count=3,
                          message_ids=("m1",), message_tokens=500, last_observed_at=T0, created_at=T0)
    return state.model_copy(update={"record": state.record.model_copy(update={"buffered_chunks": (chunk,)})})


def test_buffered_chunks_wait_for_the_observation_ttl() -> None:
    on = config(activate_after_idle=TTL)
    state = with_chunk(idle_for(on, head=400, tail=0, reflection=None))
    assert idle_tick_reason(state, on, T0 + TTL - 1) is None
    reason = idle_tick_reason(state, on, T0 + TTL)
    assert reason is not None
    assert idle_tick_reason(state, on, T0 + 10 * TTL) == reason, "same facts, same reason: one tick"
    assert idle_tick_reason(with_chunk(state, "c2"), on, T0 + TTL) != reason, "new chunks, new tick"
    assert idle_tick_reason(state, config(), T0 + 10 * TTL) is None, "idle activation is off by default"


def test_a_buffered_reflection_waits_for_the_reflection_ttl_only() -> None:
    top_level = config(activate_after_idle=TTL)
    state = idle_for(top_level, head=400, tail=400, reflection=200)
    assert idle_tick_reason(state, top_level, T0 + TTL) is None, "the top-level TTL is not inherited"
    own = config(reflection={"activate_after_idle": TTL})
    reason = idle_tick_reason(state, own, T0 + TTL)
    assert reason is not None and idle_tick_reason(state, own, T0 + TTL - 1) is None
    grown = state.model_copy(update={"record": state.record.model_copy(update={"observation_token_count": 900})})
    assert idle_tick_reason(grown, own, T0 + TTL) != reason, "a longer log may pass a guard: tick again"
    spent = state.model_copy(update={"early_reflection_for": state.last_activity_at})
    assert idle_tick_reason(spent, own, T0 + TTL) is None, "once per idle period"


def test_without_async_reflection_the_ttl_wakes_a_log_for_a_synchronous_reflection() -> None:
    sync = config(observation={"buffer_tokens": False}, reflection={"activate_after_idle": TTL})
    assert idle_tick_reason(idle_for(sync, head=400, tail=0, reflection=None), sync, T0 + TTL) is not None
    empty = idle_for(sync, head=0, tail=0, reflection=None)
    assert idle_tick_reason(empty, sync, T0 + TTL) is None, "nothing to reflect"


def _probe_states() -> list[tuple[KeyState, OMConfig]]:
    both = config(activate_after_idle=TTL, reflection={"activate_after_idle": 2 * TTL})
    auto = config(activate_after_idle="auto", reflection={"activate_after_idle": "auto"})
    sync = config(observation={"buffer_tokens": False}, reflection={"activate_after_idle": TTL})
    out = []
    for cfg in (both, auto, sync, config(), config(activate_after_idle=0)):
        for head, tail, reflection in ((400, 400, 200), (400, 0, None), (0, 0, None)):
            state = idle_for(cfg, head=head, tail=tail, reflection=reflection)
            out += [(state, cfg), (with_chunk(state), cfg),
                    (state.model_copy(update={"last_activity_at": None}), cfg),
                    (state.model_copy(update={"early_reflection_for": state.last_activity_at}), cfg)]
    return out


def test_the_reason_changes_only_at_the_times_the_core_names() -> None:
    probed = _probe_states()
    assert sum(len(idle_tick_times(s, c)) == 2 for s, c in probed) >= 1, "both TTLs run in a probe"
    assert sum(not idle_tick_times(s, c) for s, c in probed) >= 10, "and none in others"
    for n, (state, cfg) in enumerate(probed):
        times = idle_tick_times(state, cfg)
        assert list(times) == sorted(set(times)), n
        probes = [T0 - 1, T0, *[t + d for t in times for d in (-1, 0, 1)], T0 + 100 * TTL]
        edges = [float("-inf"), *times, float("inf")]
        for lo, hi in zip(edges, edges[1:]):  # one reason per interval [lo, hi)
            assert len({idle_tick_reason(state, cfg, p) for p in probes if lo <= p < hi}) <= 1, (n, lo)
        if times:  # none is due before the first; one is at it (later ones may change nothing)
            assert idle_tick_reason(state, cfg, times[0] - 1) is None, n
            assert idle_tick_reason(state, cfg, times[0]) is not None, n
        else:
            assert all(idle_tick_reason(state, cfg, p) is None for p in probes), n


def test_the_idle_settings_digest_follows_what_the_times_read() -> None:
    assert idle_settings(config()) == idle_settings(config())
    assert idle_settings(config()) != idle_settings(config(activate_after_idle=TTL))
    assert idle_settings(config(activate_after_idle=TTL)) != idle_settings(config(reflection={"activate_after_idle": TTL}))
    assert idle_settings(config()) == idle_settings(config(observation={"message_tokens": 5_000})), "thresholds do not count"
