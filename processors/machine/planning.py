"""What to do after an event changed the window: activate, buffer, observe, reflect (spec §4.4).

Every applied message is a *step* in Mastra's sense; a user message, a ``turn-start`` and an
``idle-tick`` are also *step 0* of a turn, where the idle-TTL and provider-change activations are
evaluated. The order per step follows Mastra: early activation and reflection (step 0), then the
buffering trigger below the threshold, or the threshold pipeline at or above it.

Deliberate differences:

* While a buffering cycle is in flight at the threshold, the synchronous observation waits for it
  (Mastra waits up to 30 s in-process); its result re-plans.
* If an activation leaves the window still at or above the threshold, all remaining chunks are
  activated before a synchronous observation covers the rest (Mastra main falls through to a sync
  observation that may re-observe buffered messages, #19767); chunk order is kept.
"""

from __future__ import annotations

from processors.machine.activation import activate, reset_stale_boundary
from processors.machine.buffering import maybe_buffer
from processors.machine.early_trigger import THRESHOLD, early_trigger
from processors.machine.observation import observe_candidates, start_observation
from processors.machine.reflection import maybe_reflect
from processors.machine.safe_prefix import has_incomplete_tool_calls
from processors.machine.step import Step
from schemas.messages import ChatMessage


def plan(step: Step, *, step_zero: bool = False) -> None:
    if step.config.read_only or step.state.deleted:
        return
    if step_zero:
        _early_activation(step)
        maybe_reflect(step)
    if step.pending() < step.message_threshold():
        maybe_buffer(step)
        return
    if has_incomplete_tool_calls(step.state.window):
        return
    _threshold_pipeline(step)


def _early_activation(step: Step) -> None:
    """Idle-TTL and provider-change activation: only existing chunks, never an Observer call."""
    reset_stale_boundary(step)
    if not step.state.record.buffered_chunks:
        return
    resolved = step.config.resolved
    trigger = early_trigger(step, resolved.activate_after_idle, resolved.activate_on_provider_change)
    if trigger is not None:
        activate(step, trigger)
        maybe_reflect(step)


def _threshold_pipeline(step: Step) -> None:
    if step.state.flight("buffer") is not None:
        return
    if step.state.record.buffered_chunks:
        activate(step, THRESHOLD)
        if step.pending() >= step.message_threshold() and step.state.record.buffered_chunks:
            activate(step, THRESHOLD, everything=True)
        maybe_reflect(step)
    if step.pending() < step.message_threshold() or step.state.flight("observe") is not None:
        return
    candidates = observe_candidates(step)
    if candidates:
        start_observation(step, _largest_threads_first(step, candidates))


def _largest_threads_first(step: Step, candidates: list[ChatMessage]) -> list[ChatMessage]:
    """Resource scope observes whole threads, largest first, until the threshold is reached (§4.9)."""
    if step.state.record.scope == "thread":
        return candidates
    by_thread: dict[str, list[ChatMessage]] = {}
    for message in candidates:
        by_thread.setdefault(message.thread_id, []).append(message)
    ranked = sorted(by_thread.values(), key=lambda msgs: (-step.message_tokens(msgs), msgs[0].created_at))
    picked: list[ChatMessage] = []
    threshold = step.message_threshold()
    for messages in ranked:
        picked.extend(messages)
        if step.message_tokens(picked) >= threshold:
            break
    return sorted(picked, key=lambda m: m.created_at)
