"""The OM state machine (sans-IO): ``decide(state, event, config) -> Decision``, and what it folds.

Only the simulation (``processors/simulate.py``) and the shell (``streams/``, ``bench/``) use this
room, and only through the names exported here. The rule modules below are its inside.

Where each rule of the spec is decided (module.function):

=====================================  =========================================================
spec rule                               decided in
=====================================  =========================================================
§3.1 which record an event belongs to  ``lookup.lookup_key``
§4.3 which events are steps            ``steps.step_of`` (user message = step 0; tool results =
                                       step > 0; a final reply decides nothing)
§4.1 taking a message (update, late)   ``intake.take_message``
§4.4 what runs at a step, in order     ``planning.plan`` (early activation/reflection at step 0,
                                       then the buffer trigger or the threshold pipeline)
§4.4 buffer trigger (interval, ramp)   ``token_math.should_trigger_buffer`` via
                                       ``buffering.maybe_buffer``
§4.4.3 tool calls kept out of chunks   ``safe_prefix.select_safe_buffer_prefix``
§4.5 activation timing                 ``activation.activate_at_turn_start`` (provider change,
                                       idle TTL, threshold at step 0) and
                                       ``activation.activate_at_threshold`` (threshold pipeline)
§4.5 chunks kept after activation      ``token_math.chunks_to_activate`` (retention floor
                                       ``threshold × (1 − buffer_activation)``, resolved in
                                       ``processors.config.resolve``), over the pending count
                                       the previous step left (``KeyState.step_pending_tokens``)
§4.5 block-after (overshoot allowed)   ``activation.activate`` (``force_max`` at ``block_after``)
§4.6 synchronous observation           ``observation.start_observation``
§4.7 TTL / provider-change triggers    ``early_trigger.early_trigger`` (parsing in
                                       ``processors.config.ttl``); idle ticks ``idle_ticks``
§4.8 reflection start                  ``reflection.maybe_reflect``
§4.8 buffered reflection activation    ``reflection_activation.activate_buffered_reflection``,
                                       guarded by ``reflection_guards``
§4.8 compression ladder                ``processors.reflector.levels`` / ``.ladder`` (worker side)
§4.8 generation roll-over              ``generation.roll_over``
§4.9 resource scope: one section a day ``thread_sections.merge_cycle``
§4.9 resource scope: per-thread hints  ``observation.start_observation`` / ``apply_observation_result``;
                                       batches by ``max_tokens_per_batch``: ``processors.observer.batches``
§2.1/§2.4 thresholds in force          ``processors.config.thresholds`` (shared budget,
                                       per-record overrides)
ours: an Observer that keeps failing  ``observer_latch`` (latched after ``max_failed_cycles``)
ours: a resource's daily token budget  ``budget.apply_budget`` / ``budget.budget_paused`` (the sink
                                       sums the ledger: ``streams.sink.budget``)
ours: messages the sink must hide      ``Decision.dropped`` (late) and the observed copies
                                       (``MessageInserted.observed``) in ``decide``
=====================================  =========================================================
"""

from processors.machine.decide import Decision, Event, Rejection, counter_for, decide, event_key
from processors.machine.idle_ticks import idle_settings, idle_tick_reason, idle_tick_times
from processors.machine.lookup import lookup_key
from processors.machine.state import LATE_TOLERANCE_MS, InFlight, KeyState

__all__ = [
    "LATE_TOLERANCE_MS",
    "Decision",
    "Event",
    "InFlight",
    "KeyState",
    "Rejection",
    "counter_for",
    "decide",
    "event_key",
    "idle_settings",
    "idle_tick_reason",
    "idle_tick_times",
    "lookup_key",
]
