"""Which quiet keys an idle tick would wake (spec §4.7 observation TTL, §4.8 reflection TTL).

The core acts on time only when an event carries it, and a thread whose user went quiet sends
nothing; so the worker's timer asks, for each key it holds, whether an idle TTL has run out for
something a tick can act on. The answer is a *reason* — the facts the tick would act on — not a
flag: the timer sends one tick per reason. Ticking again with the same facts would only repeat a
decision (a buffered reflection held back by a guard stays held back until the log changes).

A worker holding a million keys cannot ask each of them on every round, so the core also says
*when* to ask (:func:`idle_tick_times`): with the state unchanged, the reason can change only where
one of its TTLs runs out, and :func:`idle_settings` names what those times were computed from, so a
time written down under one configuration is not trusted under another.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Literal

import orjson
import xxhash

from processors.config import OMConfig, resolve_ttl, ttl_expired
from processors.machine.state import KeyState


def idle_tick_reason(state: KeyState, config: OMConfig, now: int) -> Hashable | None:
    """Why ``state``'s key needs an idle tick at ``now`` (epoch ms), or None if it does not."""
    resolved, record, last = config.resolved, state.record, state.last_activity_at
    options = config.observation.provider_options
    if record.buffered_chunks and _expired(resolved.activate_after_idle, state, options, now):
        return ("observation", last, tuple(chunk.id for chunk in record.buffered_chunks))
    if _reflection_can_act(state, config) and _expired(resolved.reflection_activate_after_idle, state, options, now):
        return ("reflection", last, record.buffered_reflection_cycle_id, record.observation_token_count)
    return None


def idle_tick_times(state: KeyState, config: OMConfig) -> tuple[int, ...]:
    """The times (epoch ms, ascending) at which ``idle_tick_reason(state, config, now)`` can change
    as ``now`` grows and ``state`` does not: between two of them, and after the last, it is constant.
    Empty: no idle tick will ever be due for this state."""
    last, options = state.last_activity_at, config.observation.provider_options
    if last is None:
        return ()
    times = set()
    for applies, setting in ((bool(state.record.buffered_chunks), config.resolved.activate_after_idle),
                             (_reflection_can_act(state, config), config.resolved.reflection_activate_after_idle)):
        ttl = resolve_ttl(setting, state.actor_model, options) if applies else None
        if ttl is not None:
            times.add(last + ttl)
    return tuple(sorted(times))


def idle_settings(config: OMConfig) -> str:
    """A short digest of every setting :func:`idle_tick_times` reads: equal digests, equal times."""
    resolved = config.resolved
    facts = orjson.dumps([resolved.activate_after_idle, resolved.reflection_activate_after_idle,
                          resolved.reflection_buffer_activation is not None, config.observation.provider_options],
                         option=orjson.OPT_SORT_KEYS, default=str)
    return xxhash.xxh64_hexdigest(facts)[:12]


def _expired(setting: int | Literal["auto"] | None, state: KeyState, options: dict[str, Any] | None,
             now: int) -> bool:
    return ttl_expired(resolve_ttl(setting, state.actor_model, options), state.last_activity_at, now)


def _reflection_can_act(state: KeyState, config: OMConfig) -> bool:
    """A reflection TTL acts once per idle period, on a log, by activating a buffered reflection
    (async reflection) or by running a synchronous one (async off) — see processors/machine/reflection.py."""
    record = state.record
    if not record.active_observations or state.early_reflection_for == state.last_activity_at:
        return False
    if config.resolved.reflection_buffer_activation is not None:
        return record.buffered_reflection is not None
    return state.flight("reflect-sync") is None
