"""What one step decides, in Mastra's order (spec §4.4 ``ObservationStep.prepare``).

Which events are steps is :mod:`processors.machine.steps`. At a step:

1. **Step 0 only** — activation (§4.5 step 3): by provider change, else idle TTL, else because the
   pending tokens (with the new message) reached the threshold; then ``maybe_reflect`` (§4.8).
2. **Every step** — below the threshold, the buffer trigger (§4.4 step 5), judged on the window as
   the step-0 activation left it, so a chunk is buffered in the same step an activation freed room;
   at or above it (and no tool call waiting for its result), the threshold pipeline (§4.4.1):
   activate what is buffered, else observe synchronously.
3. The step's pending count is remembered (Mastra persists ``pendingMessageTokens``): the next
   activation sizes its prefix from it (§4.5 step 5), not from the window that has grown since.

Deliberate differences:

* A step that meets a synchronous reflection in flight, or reaches the threshold while a buffering
  or observation cycle is in flight, is *deferred*: that cycle's result resumes it (Mastra's step
  blocks on the reflection, and waits up to 30 s for the buffering op).
* If an activation leaves the window still at or above the threshold, all remaining chunks are
  activated before a synchronous observation covers the rest (Mastra 1.31 stops after the
  activation; main falls through to a sync observation that may re-observe buffered messages,
  #19767); chunk order is kept.
* A synchronous observation reads at most twice the threshold (60,000 tokens at least), oldest first
  (:mod:`processors.machine.call_size`): when more waits, the step is deferred, so the cycle's
  result starts the next one.
* A latched Observer (:mod:`processors.machine.observer_latch`) starts no cycle until its retry, and
  a key whose resource is over its daily token budget (:mod:`processors.machine.budget`) none at all.
"""

from __future__ import annotations

from processors.machine.activation import activate_at_threshold, activate_at_turn_start
from processors.machine.budget import budget_paused
from processors.machine.call_size import within_call_size
from processors.machine.buffering import maybe_buffer
from processors.machine.observation import start_observation
from processors.machine.observer_latch import observer_latched
from processors.machine.reflection import maybe_reflect
from processors.machine.safe_prefix import has_incomplete_tool_calls
from processors.machine.step import Step
from schemas.messages import ChatMessage


def plan(step: Step, *, step_zero: bool = False) -> None:
    if step.config.read_only or step.state.deleted:
        return
    if step_zero:
        activate_at_turn_start(step)
        maybe_reflect(step)
    if step.flight("reflect-sync") is not None:
        step.update(deferred_step=True)  # Mastra's step blocks on a synchronous reflection
    elif step.pending() < step.message_threshold():
        maybe_buffer(step)
    elif not has_incomplete_tool_calls(step.state.window):
        _threshold_pipeline(step)
    step.update(step_pending_tokens=step.pending())


def _threshold_pipeline(step: Step) -> None:
    if step.flight("buffer") is not None:
        step.update(deferred_step=True)
        return
    if activate_at_threshold(step):
        maybe_reflect(step)
    if step.pending() < step.message_threshold():
        return
    if step.flight("observe") is not None:
        step.update(deferred_step=True)
        return
    if observer_latched(step) or budget_paused(step):
        return
    candidates = step.state.unbusy_messages()
    if candidates:
        picked = _largest_threads_first(step, candidates)
        call = within_call_size(step, picked)
        if len(call) < len(picked):
            step.update(deferred_step=True)  # the rest: the next cycle, when this one's result comes
        start_observation(step, call)


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
