"""streams/sink/budget.py against the real ClickHouse engine: what the sink tells a resource's keys,
from the cost ledger, as the day and the spending change (its clock is moved by hand here)."""

from __future__ import annotations

import uuid

import pytest

from schemas.jobs import ObserveResult, Usage
from streams.clickhouse import connect
from streams.migrate import apply_migrations
from streams.sink.budget import BudgetWatch
from streams.sink.rows import EVENT_COLUMNS, MODEL_CALL_COLUMNS, result_rows

pytestmark = pytest.mark.integration
DAY = 86_400_000
T = 1_764_547_200_000  # 2025-12-01 00:00 UTC


class Clock:
    def __init__(self, ms: int) -> None:
        self.ms = ms

    def __call__(self) -> float:
        return self.ms / 1000


def _call(client, cycle: str, resource: str, thread: str, at: int, tokens: int, offset: int) -> None:
    value = ObserveResult(cycle_id=cycle, key=f"thread:{thread}", generation=0, ok=True, started_at=at - 100,
                          completed_at=at, usage=Usage(input_tokens=tokens, output_tokens=0), model="openai/gpt-4o-mini",
                          resource_id=resource, mode="sync").to_bytes()
    client.insert("om_model_calls", result_rows(value, offset).rows["om_model_calls"],
                  column_names=list(MODEL_CALL_COLUMNS))


def _event(client, resource: str, key: str, kind: str, offset: int) -> None:
    row = dict.fromkeys(EVENT_COLUMNS, "")
    row.update(resource_id=resource, lookup_key=key, type=kind, at=T, event_id=offset, offset=offset, payload="{}")
    client.insert("om_events", [[row[c] for c in EVENT_COLUMNS]], column_names=list(EVENT_COLUMNS))


@pytest.fixture
def client(clickhouse_dsn: str):
    client = connect(f"{clickhouse_dsn}?database=t_{uuid.uuid4().hex[:12]}")
    apply_migrations(client)
    return client


def test_over_the_limit_each_key_of_the_resource_is_told_once_a_day(client) -> None:
    clock = Clock(T + 3_600_000)
    watch = BudgetWatch(limit=1_000, clock=clock)
    _call(client, "c1", "maya", "t1", T + 1_000, 600, 1)
    _call(client, "c2", "maya", "t2", T + 2_000, 300, 2)
    _call(client, "c3", "other", "t9", T + 2_000, 5_000, 3)
    _call(client, "c0", "maya", "t1", T - 10, 5_000, 4)  # yesterday's spending does not count
    assert watch.after_batch(client, {"maya"}) == [], "900 of 1,000"

    _call(client, "c4", "maya", "t2", T + 3_000, 100, 5)
    notices = watch.after_batch(client, {"maya"})
    assert sorted((n.key, n.resource_id, n.exceeded, n.used_tokens, n.day) for n in notices) == [
        ("thread:t1", "maya", True, 1_000, "2025-12-01"), ("thread:t2", "maya", True, 1_000, "2025-12-01")]
    assert watch.after_batch(client, {"maya"}) == [], "told once"
    _call(client, "c5", "maya", "t3", T + 4_000, 10, 6)  # a thread that starts later
    assert [n.key for n in watch.after_batch(client, {"maya"})] == ["thread:t3"]
    assert [n.key for n in watch.after_batch(client, {"other"})] == ["thread:t9"]

    assert watch.sweep(client) == [], "still over today"
    clock.ms += DAY  # the next day: every told key is allowed again
    allowed = watch.sweep(client)
    assert sorted((n.key, n.exceeded, n.used_tokens, n.day) for n in allowed if n.resource_id == "maya") == [
        ("thread:t1", False, 0, "2025-12-02"), ("thread:t2", False, 0, "2025-12-02"),
        ("thread:t3", False, 0, "2025-12-02")]
    assert watch.sweep(client) == [], "allowed once"


def test_a_restarted_sink_finds_the_paused_keys_in_the_events_and_lifts_them_under_a_larger_limit(client) -> None:
    _call(client, "c1", "maya", "t1", T + 1_000, 2_000, 1)
    _event(client, "maya", "thread:t1", "budget-exceeded", 10)
    _event(client, "maya", "thread:t2", "budget-exceeded", 11)
    _event(client, "maya", "thread:t2", "budget-restored", 12)  # t2 was allowed again since
    clock = Clock(T + 3_600_000)
    assert BudgetWatch(limit=1_000, clock=clock).sweep(client) == [], "over the old limit still"
    (allowed,) = BudgetWatch(limit=10_000, clock=clock).sweep(client)
    assert (allowed.key, allowed.exceeded, allowed.used_tokens, allowed.limit_tokens) == ("thread:t1", False, 2_000,
                                                                                          10_000)
