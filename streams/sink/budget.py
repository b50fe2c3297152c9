"""Per-resource daily token budgets, kept by the sink from the cost ledger (issue 23 item 4).

The processor cannot sum a resource's spending: its threads are keys on many partitions and
workers. The sink writes every model call into ``om_model_calls`` by resource, so it is where the
sum is known. Rules kept (the key's side is processors/machine/budget.py):

* **The ledger is the truth.** A resource's spending is the sum of ``input_tokens + output_tokens``
  of its model calls completed in the current UTC day (the sink's clock), read from ClickHouse after
  the batch that wrote them — so several sink processes (server mode) agree, and a restarted sink
  needs no state of its own.
* **Over it, every key hears it.** After a batch holding a resource's results, if its spending has
  reached ``daily_token_budget``, a ``budget`` control event (exceeded) goes to each key the
  resource has (its context rows and ledger rows) that this process has not told yet that day — a
  thread that starts later is told after its first call. The notice names the resource, and a key
  owned by another resource ignores it (a refused message leaves a context row under the sender).
  The sends are confirmed before the batch is committed; a failed one ends the sink loop (the
  worker restarts, the batch is redelivered).
* **Allowed again, every key hears that too.** A sweep (at start, then every ``sweep_s``) finds the
  resources whose newest notice was "exceeded" — in the events table, so a restart remembers — and
  whose spending today is under the limit (a new day, or a larger budget after a restart): each of
  their keys gets a ``budget`` event that is not exceeded.
* Repeats are harmless: a key follows only a change (the core emits nothing for a repeat).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from clickhouse_connect.driver.client import Client

from schemas.control import BudgetChange

DAY_MS = 86_400_000

_USED = """
SELECT resource_id, sum(input_tokens + output_tokens) FROM om_model_calls FINAL
WHERE resource_id IN {resources:Array(String)} AND completed_at >= {start:Int64} AND completed_at < {end:Int64}
GROUP BY resource_id
"""

_KEYS = """
SELECT DISTINCT resource_id, lookup_key FROM (
    SELECT resource_id, lookup_key FROM om_contexts WHERE resource_id IN {resources:Array(String)}
    UNION ALL
    SELECT resource_id, lookup_key FROM om_model_calls WHERE resource_id IN {resources:Array(String)})
"""

# Each key's newest budget notice (events of one key share a partition: offset orders them).
_EXCEEDED = """
SELECT resource_id, lookup_key FROM om_events
WHERE type IN ('budget-exceeded', 'budget-restored')
GROUP BY resource_id, lookup_key
HAVING argMax(type, offset) = 'budget-exceeded'
"""


def utc_day(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).strftime("%Y-%m-%d")


def day_bounds(ms: int) -> tuple[int, int]:
    start = ms - ms % DAY_MS
    return start, start + DAY_MS


@dataclass
class BudgetWatch:
    """What one sink process decides; its IO is ClickHouse reads only (the sink sends the events)."""

    limit: int
    clock: Callable[[], float]
    sweep_s: float = 30.0
    _told: dict[str, tuple[str, set[str]]] = field(default_factory=dict)  # resource -> (day, keys told)

    def after_batch(self, client: Client, resources: Iterable[str]) -> list[BudgetChange]:
        """Exceeded notices for the keys of the batch's resources that are over the limit today."""
        now = self._now()
        used = self._used(client, set(resources), now)
        over = {resource: tokens for resource, tokens in used.items() if tokens >= self.limit}
        if not over:
            return []
        day, notices = utc_day(now), []
        for resource, key in self._keys(client, over):
            told_day, told = self._told.get(resource, (day, set()))
            if told_day != day:
                told = set()
            if key in told:
                continue
            told.add(key)
            self._told[resource] = (day, told)
            notices.append(self._notice(resource, key, True, day, over[resource], now))
        return notices

    def sweep(self, client: Client) -> list[BudgetChange]:
        """Allowed-again notices for every key of a resource last told "exceeded" that is now under."""
        now = self._now()
        paused: dict[str, set[str]] = {}
        for resource, key in client.query(_EXCEEDED).result_rows:
            paused.setdefault(resource, set()).add(key)
        for resource, (_, told) in self._told.items():  # told here, their events maybe not stored yet
            paused.setdefault(resource, set()).update(told)
        used = self._used(client, set(paused), now)
        day, notices = utc_day(now), []
        for resource, keys in sorted(paused.items()):
            tokens = used.get(resource, 0)
            if tokens >= self.limit:
                continue
            self._told.pop(resource, None)
            notices.extend(self._notice(resource, key, False, day, tokens, now) for key in sorted(keys))
        return notices

    def _now(self) -> int:
        return int(self.clock() * 1000)

    def _used(self, client: Client, resources: set[str], now: int) -> dict[str, int]:
        if not resources:
            return {}
        start, end = day_bounds(now)
        rows = client.query(_USED, parameters={"resources": sorted(resources), "start": start, "end": end})
        return {resource: int(tokens) for resource, tokens in rows.result_rows}

    @staticmethod
    def _keys(client: Client, resources: dict[str, int]) -> Sequence[tuple[str, str]]:
        rows = client.query(_KEYS, parameters={"resources": sorted(resources)}).result_rows
        return sorted((resource, key) for resource, key in rows if key)

    def _notice(self, resource: str, key: str, exceeded: bool, day: str, used: int, now: int) -> BudgetChange:
        return BudgetChange(key=key, resource_id=resource, at=now, exceeded=exceeded, day=day, used_tokens=used,
                            limit_tokens=self.limit)


def ledger_resources(rows: Iterable[Sequence[Any]]) -> set[str]:
    """The resources of a batch's ledger rows (``om_model_calls``: resource first)."""
    return {row[0] for row in rows if row and row[0]}
