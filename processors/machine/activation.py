"""Activation: swapping buffered chunks into the active observations — no LLM call (spec §4.5, §4.7).

When it happens (the step calls these, :mod:`processors.machine.planning`):

* at the start of a turn (step 0, :func:`activate_at_turn_start`): when the actor's provider
  changed, else when the thread was idle past the TTL, else when the pending tokens with the new
  message reached the threshold — unless a buffering cycle is in flight (then the threshold
  pipeline waits for it);
* in the threshold pipeline (:func:`activate_at_threshold`): whenever chunks exist and the
  pending tokens are at or above the threshold; if one activation leaves them there, every chunk.

How many chunks: :func:`processors.machine.token_math.chunks_to_activate`, over the pending count
the previous step left (Mastra's persisted ``pendingMessageTokens``).

Rules this module keeps:

* Chunks activate oldest first, as a prefix; the count comes from :func:`chunks_to_activate`.
* The cursor only moves forward (fix of the cursor-moves-backward race H1).
* The messages of activated chunks leave the window by id; their observations are appended after a
  ``message boundary`` separator so earlier text stays byte-stable for prompt caching.
* Continuation hints are overwritten with the last activated chunk's (normally none: buffered
  Observer calls run without hints — Mastra's documented behaviour).
"""

from __future__ import annotations

from processors.context import iso_timestamp
from processors.machine.early_trigger import THRESHOLD, early_trigger
from processors.machine.lifecycle_events import emit, marker_config
from processors.machine.observation_groups import message_range
from processors.machine.step import Step
from processors.machine.thread_meta import apply_title, set_hints
from processors.machine.token_math import chunks_to_activate
from schemas.deltas import ChunkChanged, MessagesObserved
from schemas.lifecycle import Activation, Trigger
from schemas.messages import ChatMessage
from schemas.record import BufferedChunk, boundary


def append_observations(existing: str, addition: str, at_ms: int) -> str:
    """Existing text + boundary + addition (no separator when there is nothing yet)."""
    if not existing:
        return addition
    return f"{existing}{boundary(iso_timestamp(at_ms))}{addition}"


def reset_stale_boundary(step: Step) -> None:
    """A boundary far above what is pending now is stale (spec §4.5 step 1); start counting again."""
    boundary_tokens = step.state.record.last_buffered_at_tokens
    if boundary_tokens > 0 and step.pending() < 0.5 * boundary_tokens:
        step.update_record(last_buffered_at_tokens=0)


def activate_at_turn_start(step: Step) -> None:
    """Step 0 (§4.5 step 3): existing chunks only, never an Observer call."""
    reset_stale_boundary(step)
    if not step.state.record.buffered_chunks or step.flight("buffer") is not None:
        return
    resolved = step.resolved
    trigger = early_trigger(step, resolved.activate_after_idle, resolved.activate_on_provider_change)
    if trigger is None and step.pending() >= step.message_threshold():
        trigger = THRESHOLD
    if trigger is not None:
        activate(step, trigger)


def activate_at_threshold(step: Step) -> bool:
    """The threshold pipeline's activation (§4.4.1 step 4); whether anything activated."""
    if not step.state.record.buffered_chunks:
        return False
    activate(step, THRESHOLD)
    if step.pending() >= step.message_threshold() and step.state.record.buffered_chunks:
        activate(step, THRESHOLD, everything=True)
    return True


def activate(step: Step, trigger: Trigger, *, everything: bool = False) -> bool:
    """Activate a prefix of the buffered chunks (all of them with ``everything``)."""
    record = step.state.record
    chunks = record.buffered_chunks
    if not chunks:
        return False
    reset_stale_boundary(step)
    figures = step.figures()
    pending = step.state.step_pending_tokens or figures.chunk_message_total
    resolved = step.resolved
    block_after = resolved.block_after
    count = len(chunks) if everything else chunks_to_activate(
        figures.chunk_message_tokens,
        pending,
        figures.message_threshold,
        resolved.activation_ratio if resolved.activation_ratio is not None else 1.0,
        force_max=block_after is not None and pending >= block_after,
    )
    activated, remaining = chunks[:count], chunks[count:]
    step.update(step_pending_tokens=max(0, pending - sum(c.message_tokens for c in activated)))
    _apply(step, activated, remaining)
    removed = step.remove_from_window(*(chunk.message_ids for chunk in activated))
    for chunk, its_messages in zip(activated, removed):
        _report(step, chunk, its_messages, trigger)
    return True


def _apply(step: Step, activated: tuple[BufferedChunk, ...], remaining: tuple[BufferedChunk, ...]) -> None:
    record = step.state.record
    last = activated[-1]
    text = append_observations(
        record.active_observations, "\n\n".join(c.observations for c in activated), last.last_observed_at
    )
    cursor = max(record.last_observed_at or 0, last.last_observed_at)
    step.update_record(
        active_observations=text,
        observation_token_count=record.observation_token_count + sum(c.token_count for c in activated),
        last_observed_at=cursor,
        buffered_chunks=remaining,
        last_buffered_at_tokens=0,
    )
    thread_id = record.thread_id
    if thread_id is not None:
        set_hints(step, thread_id, current_task=None, suggested_response=None)
        if last.thread_title:
            apply_title(step, thread_id, last.thread_title, last.cycle_id)


def _report(step: Step, chunk: BufferedChunk, removed: list[ChatMessage], trigger: Trigger) -> None:
    """The deltas and the event of one activated chunk, whose ``removed`` messages left the window."""
    version = step.state.version
    step.deltas.append(
        ChunkChanged(key=step.state.key, version=version, at=step.now,
                     generation=step.state.record.generation, status="activated", chunk=chunk)
    )
    covered_range = message_range(removed)
    if removed and covered_range:
        step.deltas.append(
            MessagesObserved(key=step.state.key, version=version, at=step.now, cycle_id=chunk.cycle_id,
                             generation=step.state.record.generation,
                             message_ids=[m.id for m in removed], range=covered_range)
        )
    emit(
        step,
        Activation,
        cycle_id=chunk.cycle_id,
        operation_type="observation",
        activated_at=step.now,
        chunks_activated=1,
        tokens_activated=chunk.message_tokens,
        observation_tokens=chunk.token_count,
        messages_activated=len(chunk.message_ids),
        generation=step.state.record.generation,
        config=marker_config(step),
        observations=chunk.observations,
        message_ids=list(chunk.message_ids),
        range=covered_range,
        **trigger.model_dump(),
    )
