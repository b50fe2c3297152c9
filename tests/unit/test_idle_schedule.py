"""The idle timer's schedule (streams/idle_schedule.py): a key is looked at when one of its times
has come, once, and set again from what the look read."""

from __future__ import annotations

from processors.config import OMConfig
from processors.machine import idle_tick_times
from streams.idle_schedule import IdleSchedule
from tests.unit.machine.core_driver import T0
from tests.unit.machine.test_idle_ticks import TTL, with_chunk
from tests.unit.machine.test_reflection_early_triggers import idle_for

CONFIG = OMConfig.model_validate({"activate_after_idle": TTL, "reflection": {"activate_after_idle": 2 * TTL}})


def test_a_key_is_due_at_its_first_time_once_then_at_the_next_after_the_look() -> None:
    state = with_chunk(idle_for(CONFIG, head=400, tail=400, reflection=200))
    assert idle_tick_times(state, CONFIG) == (T0 + TTL, T0 + 2 * TTL)
    schedule = IdleSchedule(CONFIG)
    schedule.written("k", state)
    assert schedule.due(T0 + TTL - 1) == []
    assert schedule.due(T0 + TTL) == ["k"]
    assert schedule.due(T0 + TTL) == [], "off the schedule until set again"
    schedule.checked("k", state, T0 + TTL)
    assert schedule.due(T0 + 2 * TTL - 1) == [] and schedule.due(T0 + 2 * TTL) == ["k"]
    schedule.checked("k", state, T0 + 2 * TTL)
    assert len(schedule) == 0, "no time after the last: never looked at again while the state stays"


def test_a_batch_resets_the_key_and_a_deletion_removes_it() -> None:
    schedule = IdleSchedule(CONFIG)
    state = with_chunk(idle_for(CONFIG, head=400, tail=0, reflection=None))
    schedule.written("k", state)
    later = state.model_copy(update={"last_activity_at": T0 + 10 * TTL})
    schedule.written("k", later)
    assert schedule.due(T0 + 5 * TTL) == [], "the older time no longer counts"
    assert schedule.due(T0 + 11 * TTL) == ["k"]
    schedule.written("k", later)
    schedule.written("k", None)
    assert schedule.due(T0 + 100 * TTL) == []
    quiet = idle_for(CONFIG, head=0, tail=0, reflection=None)
    assert schedule.written("q", quiet).endswith(" ") and len(schedule) == 0, "nothing to tick: not scheduled"


def test_recovery_trusts_a_hint_only_from_the_same_settings() -> None:
    state = with_chunk(idle_for(CONFIG, head=400, tail=0, reflection=None))
    hint = IdleSchedule(CONFIG).written("k", state)
    same, other = IdleSchedule(CONFIG), IdleSchedule(OMConfig.model_validate({"activate_after_idle": 2 * TTL}))
    for schedule in (same, other):
        schedule.recovered("k", hint)
    assert same.due(T0 + TTL - 1) == [] and same.due(T0 + TTL) == ["k"]
    assert other.due(0) == ["k"], "other settings: looked at at once"
    legacy = IdleSchedule(CONFIG)
    legacy.recovered("k", "")
    assert legacy.due(0) == ["k"]


def test_a_tick_not_sent_is_looked_at_again_next_round() -> None:
    schedule = IdleSchedule(CONFIG)
    schedule.again("k")
    assert schedule.due(0) == ["k"]


def test_the_heap_does_not_grow_with_resets() -> None:
    schedule = IdleSchedule(CONFIG)
    state = with_chunk(idle_for(CONFIG, head=400, tail=0, reflection=None))
    for n in range(10_000):
        schedule.written("k", state.model_copy(update={"last_activity_at": T0 + n}))
        schedule.due(0)
    assert len(schedule._heap) < 2_100


def test_the_reasons_ticked_are_kept_for_live_keys_only() -> None:
    schedule = IdleSchedule(CONFIG)
    schedule.ticked["gone"] = schedule.ticked["moved"] = schedule.ticked["kept"] = ("observation", T0, ("c1",))
    schedule.written("gone", None)
    schedule.discard("moved")
    assert set(schedule.ticked) == {"kept"}
