"""Whether a provider change or an idle TTL fires at this step, for one section's settings (§4.7).

Observation and reflection judge the same facts — the actor model, the model and time of the last
assistant activity — against their own options: observation inherits the top-level ones, reflection
has its own, off by default. One function for both keeps them agreeing on when a prompt cache went
cold. A provider change wins over an expired TTL, as in Mastra.
"""

from __future__ import annotations

from typing import Literal

from processors.machine.step import Step
from processors.config import did_provider_change, resolve_ttl, ttl_expired
from schemas.lifecycle import Trigger

THRESHOLD = Trigger(triggered_by="threshold")


def early_trigger(
    step: Step, activate_after_idle: int | Literal["auto"] | None, activate_on_provider_change: bool
) -> Trigger | None:
    """The early trigger for this step, with the details its markers carry, or None."""
    if activate_after_idle is None and not activate_on_provider_change:
        return None  # both off (the default, and always for reflection unless opted in): nothing to judge
    state = step.state
    actor, previous = state.actor_model, state.last_model
    if activate_on_provider_change and did_provider_change(actor, previous):
        return Trigger(triggered_by="provider_change", previous_model=previous, current_model=actor)
    ttl = resolve_ttl(activate_after_idle, actor, step.config.observation.provider_options)
    last = state.last_activity_at
    if last is not None and ttl_expired(ttl, last, step.now):
        return Trigger(triggered_by="ttl", last_activity_at=last, ttl_expired_ms=step.now - last)
    return None
