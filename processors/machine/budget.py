"""A resource's daily token budget, as one of its keys follows it (issue 23 item 4).

Ours, not Mastra's (``daily_token_budget``). A resource's threads live on many keys, partitions and
workers, so no key can sum the resource's spending: the sink does, from the cost ledger, and tells
each of the resource's keys with a ``budget`` control event (streams/sink/budget.py). The core only
follows those events, in log order, so a replay of the log decides the same. Rules kept:

* **Exceeded**: one ``budget-exceeded`` event (day, tokens used, the limit) and no new model cycle —
  Observer buffering, synchronous observation, background or synchronous reflection — until the key
  hears that the budget allows again. A repeated notice changes nothing and emits nothing.
* **Nothing is lost meanwhile**: messages keep entering the window and the agent's context has them;
  cycles already in flight complete and are applied; activating chunks or a reflection already
  buffered needs no model and goes on.
* **Allowed again** (a new day, a larger budget): one ``budget-restored`` event, and the key plans at
  once as at a turn's start, so what waited starts now instead of at the next message.
* A notice for another resource than the key's owner changes nothing.
* The event is applied at the key's clock: the sink's wall clock never moves the key's event time.
"""

from __future__ import annotations

from processors.machine.lifecycle_events import emit
from processors.machine.step import Step
from schemas.control import BudgetChange
from schemas.lifecycle import BudgetExceeded, BudgetRestored


def budget_paused(step: Step) -> bool:
    """No new model cycle may start for the key."""
    return step.state.budget_exceeded_day is not None


def apply_budget(step: Step, event: BudgetChange) -> bool:
    """Follow the notice; True when cycles are allowed again (the caller then plans)."""
    if event.resource_id != step.state.record.resource_id:
        return False  # another resource's budget: never this key's
    figures = {"day": event.day, "used_tokens": event.used_tokens, "limit_tokens": event.limit_tokens}
    if event.exceeded:
        if step.state.budget_exceeded_day is None:
            step.update(budget_exceeded_day=event.day)
            emit(step, BudgetExceeded, **figures)
        return False
    if step.state.budget_exceeded_day is None:
        return False
    step.update(budget_exceeded_day=None)
    emit(step, BudgetRestored, **figures)
    return True
