"""An Observer that keeps failing is latched instead of retried on every message (issue 23, item 4).

Mastra retries a failed Observer at the next step, forever; with a broken model, a key or a prompt
the model cannot answer, that is one paid call per message and a stream of failure events. Ours,
not Mastra's; ``observation.max_failed_cycles`` = 0 restores Mastra's behaviour.

Rules kept:

* An Observer result (buffering or synchronous) that fails counts one failure — a model that
  makes no progress by looping is one: the model layer reports degenerate output as a failed
  call. A result that makes progress (the window, the buffered chunks or the cursor moved) resets
  the count and lifts the latch. An empty buffering answer is neither: Mastra stores nothing for
  it and the threshold's synchronous observation takes those messages (spec §4.4).
* At ``max_failed_cycles`` failures in a row the key is latched: one ``observation-latched`` event
  (failures, the last error, when the next try is due) and no new Observer cycle — buffering or
  synchronous — until ``latch_retry_ms`` of event time has passed. Then one cycle tries again; if it
  fails too, the latch is set again, with another event.
* Nothing is lost meanwhile: messages keep entering the window and the agent's context has them;
  activating chunks already buffered, and reflection, go on.
* A ``config-override`` for the key lifts the latch at once (the operator's resume).
"""

from __future__ import annotations

from processors.machine.lifecycle_events import emit
from processors.machine.state import InFlight
from processors.machine.step import Step
from schemas.jobs import ObserveResult
from schemas.lifecycle import ObservationLatched

Progress = tuple[int, int, int]


def progress_mark(step: Step) -> Progress:
    """What an Observer result changes when it makes progress."""
    record = step.state.record
    return len(step.state.window), len(record.buffered_chunks), record.last_observed_at or 0


def observer_latched(step: Step) -> bool:
    until = step.state.observer_latched_until
    return until is not None and step.now < until


def note_observer_outcome(step: Step, flight: InFlight, result: ObserveResult, before: Progress) -> None:
    if result.ok:
        after = progress_mark(step)
        if after[0] < before[0] or after[1] > before[1] or after[2] > before[2]:
            lift_latch(step)
        return
    failures = step.state.observer_failures + 1
    step.update(observer_failures=failures)
    limit = step.config.observation.max_failed_cycles
    if limit == 0 or failures < limit:
        return
    retry_at = step.now + step.config.observation.latch_retry_ms
    step.update(observer_latched_until=retry_at)
    emit(step, ObservationLatched, cycle_id=flight.cycle_id, failures=failures,
         error=(result.error or "observation failed")[:500], retry_at=retry_at)


def lift_latch(step: Step) -> None:
    if step.state.observer_latched_until is not None or step.state.observer_failures:
        step.update(observer_failures=0, observer_latched_until=None)
