"""Reflection's own idle-TTL and provider-change triggers (spec §2.2, §4.7, §4.8) and the
early-trigger guards of a buffered reflection (scenario 40).

With the defaults R = 40 000 and ba = 0.5 the size floor is round(0.75 × 40 000 × 0.5) = 15 000.
Every observation line below counts 20 tokens, so a log of N tokens is N / 20 lines.
"""

from __future__ import annotations

from typing import Any

from processors.config import OMConfig
from processors.machine.decide import counter_for
from processors.machine.generation import record_id
from processors.machine.reflection_guards import early_activation_floor, early_activation_suppressed
from processors.machine.state import KeyState
from schemas.control import IdleTick, TurnStart
from schemas.record import OMRecord
from tests.unit.machine.core_driver import T0, Driver

KEY = "thread:t1"
TTL = 300_000
ACTOR = "openai/gpt-4o"
LINE_TOKENS = 20


def lines(tokens: int, seed: str) -> str:
    count = tokens // LINE_TOKENS
    return "\n".join(
        f"* 🟡 (14:{i % 60:02d}) {seed}{i} user mentioned the quarterly plan for our project {seed}{i * 7}"
        for i in range(count)
    )


def config(**options: Any) -> OMConfig:
    return OMConfig.model_validate(options)


def idle_for(config: OMConfig, *, head: int, tail: int, reflection: int | None) -> KeyState:
    """A thread last active at T0 whose log is ``head`` reflected + ``tail`` unreflected tokens,
    with a buffered reflection of ``reflection`` tokens over the head (none: no buffer)."""
    count = counter_for(config).count_observations
    head_text, tail_text = lines(head, "h"), lines(tail, "t")
    active = f"{head_text}\n{tail_text}" if tail_text else head_text
    buffered: dict[str, Any] = {}
    if reflection is not None:
        reflection_text = lines(reflection, "r")
        buffered = {
            "buffered_reflection": reflection_text,
            "buffered_reflection_tokens": count(reflection_text),
            "buffered_reflection_input_tokens": count(head_text),
            "reflected_observation_line_count": len(head_text.split("\n")),
            "buffered_reflection_cycle_id": "reflect-buf-1-abcdefghi",
        }
    record = OMRecord(id=record_id(KEY, 0), key=KEY, scope="thread", thread_id="t1", resource_id="r1",
                      active_observations=active, observation_token_count=count(active),
                      last_observed_at=T0 - 1, created_at=T0, updated_at=T0, **buffered)
    return KeyState(key=KEY, record=record, clock=T0, last_message_at=T0, last_activity_at=T0,
                    last_model=ACTOR, actor_model=ACTOR)


def reflection_events(d: Driver, kind: str) -> list:
    return [e for e in d.events(kind) if e.operation_type == "reflection"]


def tick(d: Driver, after: int) -> None:
    d.feed(IdleTick(key=KEY, at=T0 + after))


def switch_model(d: Driver, model: str, after: int = 60_000) -> None:
    d.feed(TurnStart(thread_id="t1", resource_id="r1", at=T0 + after, model=model))


def assert_kept_for_threshold(d: Driver, reflection_tokens: int) -> None:
    """A suppressed early trigger changes nothing: same generation, buffer kept, no job, no marker."""
    assert d.state.record.generation == 0
    assert d.state.record.buffered_reflection_tokens == reflection_tokens
    assert d.jobs == [] and d.events() == []


TTL_ON = {"reflection": {"activate_after_idle": TTL}}


# --- scenario 40 ---------------------------------------------------------------------------------


def test_s40_composition_guard_suppresses_an_early_trigger() -> None:
    assert early_activation_suppressed(8000, 5000, 13000, 40_000, 0.5) == "composition"
    cfg = config(**TTL_ON)
    d = Driver(cfg, state=idle_for(cfg, head=20_000, tail=5000, reflection=8000))
    tick(d, TTL + 1000)
    assert_kept_for_threshold(d, 8000)


def test_s40_size_guard_suppresses_an_early_trigger() -> None:
    assert early_activation_floor(40_000, 0.5) == 15_000
    assert early_activation_suppressed(8000, 9000, 14_000, 40_000, 0.5) == "size"
    cfg = config(**TTL_ON)
    d = Driver(cfg, state=idle_for(cfg, head=20_000, tail=9000, reflection=5000))
    assert counter_for(cfg).count_observations(lines(5000, "r") + "\n\n" + lines(9000, "t")) < 15_000
    tick(d, TTL + 1000)
    assert_kept_for_threshold(d, 5000)


def test_s40_threshold_trigger_is_not_guarded() -> None:
    assert early_activation_suppressed(8000, 5000, 13000, 40_000, 0.5) is not None
    cfg = config(**TTL_ON)
    d = Driver(cfg, state=idle_for(cfg, head=36_000, tail=5000, reflection=8000))
    assert d.state.record.observation_token_count >= 40_000
    switch_model(d, ACTOR)
    (activation,) = reflection_events(d, "activation")
    assert activation.triggered_by == "threshold" and activation.ttl_expired_ms is None
    assert d.state.record.generation == 1 and d.state.record.buffered_reflection is None
    assert d.state.record.observation_token_count < 15_000


# --- early triggers below R ----------------------------------------------------------------------


def test_ttl_trigger_below_threshold_activates_the_buffered_reflection() -> None:
    cfg = config(**TTL_ON)
    d = Driver(cfg, state=idle_for(cfg, head=20_000, tail=12_000, reflection=8000))
    tick(d, TTL - 1000)
    assert reflection_events(d, "activation") == []
    tick(d, TTL + 1000)
    (activation,) = reflection_events(d, "activation")
    assert activation.triggered_by == "ttl"
    assert activation.last_activity_at == T0 and activation.ttl_expired_ms == TTL + 1000
    assert activation.cycle_id == "reflect-buf-1-abcdefghi"
    assert activation.config.activate_after_idle == TTL
    assert activation.tokens_activated > 30_000 > activation.observation_tokens >= 20_000
    assert d.state.record.generation == 1 and d.state.record.buffered_reflection is None
    assert d.state.record.active_observations.endswith(lines(12_000, "t"))


def test_provider_change_trigger_activates_the_buffered_reflection() -> None:
    cfg = config(reflection={"activate_on_provider_change": True})
    d = Driver(cfg, state=idle_for(cfg, head=20_000, tail=12_000, reflection=8000))
    switch_model(d, "openai.responses/gpt-4o")
    assert reflection_events(d, "activation") == [], "a provider variant is the same provider"
    switch_model(d, "anthropic/claude-sonnet-4", after=120_000)
    (activation,) = reflection_events(d, "activation")
    assert activation.triggered_by == "provider_change"
    assert activation.previous_model == ACTOR and activation.current_model == "anthropic/claude-sonnet-4"
    assert activation.ttl_expired_ms is None and d.state.record.generation == 1


def test_reflection_early_triggers_are_off_by_default() -> None:
    cfg = config()
    d = Driver(cfg, state=idle_for(cfg, head=20_000, tail=12_000, reflection=8000))
    switch_model(d, "anthropic/claude-sonnet-4")
    tick(d, 48 * 3_600_000)
    assert d.events() == [] and d.jobs == []
    assert d.state.record.generation == 0 and d.state.record.buffered_reflection is not None


def test_top_level_activate_after_idle_is_not_inherited_by_reflection() -> None:
    cfg = config(activate_after_idle=TTL, activate_on_provider_change=True)
    assert cfg.resolved.activate_after_idle == TTL and cfg.resolved.reflection_activate_after_idle is None
    d = Driver(cfg, state=idle_for(cfg, head=20_000, tail=12_000, reflection=8000))
    tick(d, TTL + 1000)
    switch_model(d, "anthropic/claude-sonnet-4", after=TTL + 2000)
    assert reflection_events(d, "activation") == [] and d.jobs == []
    assert d.state.record.generation == 0


def test_ttl_trigger_runs_a_sync_reflection_below_threshold_without_async_reflection() -> None:
    cfg = config(observation={"buffer_tokens": False}, reflection={"activate_after_idle": "5m"})
    assert cfg.resolved.reflection_buffer_activation is None
    d = Driver(cfg, state=idle_for(cfg, head=10_000, tail=0, reflection=None))
    tick(d, TTL + 1000)
    (job,) = d.jobs
    assert job.kind == "reflect" and job.mode == "sync" and job.input_tokens < 40_000
    (start,) = reflection_events(d, "observation-start")
    assert start.triggered_by == "ttl" and start.ttl_expired_ms == TTL + 1000
    assert start.config.activate_after_idle == TTL
    d.answer(job)
    (end,) = reflection_events(d, "observation-end")
    assert end.triggered_by == "ttl" and end.last_activity_at == T0
    assert d.state.record.generation == 1


def test_an_early_trigger_reflects_once_per_idle_period() -> None:
    cfg = config(observation={"buffer_tokens": False}, reflection={"activate_after_idle": TTL})
    d = Driver(cfg, state=idle_for(cfg, head=10_000, tail=0, reflection=None))
    tick(d, TTL + 1000)
    d.answer(d.jobs[0], ok=False)
    tick(d, TTL + 6000)
    tick(d, 2 * TTL)
    assert d.jobs == [] and len(reflection_events(d, "observation-start")) == 1
