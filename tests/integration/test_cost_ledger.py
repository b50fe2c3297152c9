"""The cost ledger in ClickHouse: rows from results, read by day/resource/role/model, and ``om costs``."""

from __future__ import annotations

import uuid

import pytest
from typer.testing import CliRunner

from schemas.jobs import ObserveResult, ReflectResult, Usage
from streams.cli import app
from streams.clickhouse import connect
from streams.ledger import by_day
from streams.migrate import apply_migrations
from streams.settings import get_settings
from streams.sink.rows import MODEL_CALL_COLUMNS, result_rows

pytestmark = pytest.mark.integration

DAY = 86_400_000
T = 1_764_547_200_000  # 2025-12-01 00:00 UTC


def result(kind: type, cycle: str, resource: str, at: int, model: str, tokens: tuple[int, int]) -> bytes:
    extra = {"mode": "sync"} if kind is ObserveResult else {"mode": "background"}
    return kind(cycle_id=cycle, key=f"thread:{resource}-t", generation=0, ok=True, started_at=at - 500,
                completed_at=at, usage=Usage(input_tokens=tokens[0], output_tokens=tokens[1]), model=model,
                resource_id=resource, **extra).to_bytes()


def test_the_ledger_sums_calls_by_day_resource_role_and_model_and_om_costs_prints_it(clickhouse_dsn: str) -> None:
    dsn = f"{clickhouse_dsn}?database=t_{uuid.uuid4().hex[:12]}"
    client = connect(dsn)
    apply_migrations(client)
    values = [
        (result(ObserveResult, "o1", "maya", T + 1_000, "openai/gpt-4o-mini", (1_000, 200)), 1),
        (result(ObserveResult, "o1", "maya", T + 1_000, "openai/gpt-4o-mini", (1_000, 200)), 9),  # redelivered
        (result(ObserveResult, "o2", "maya", T + 2_000, "openai/gpt-4o-mini", (500, 100)), 2),
        (result(ReflectResult, "r1", "maya", T + DAY + 5, "om-deterministic/reflector", (800, 80)), 3),
        (result(ObserveResult, "x1", "other", T + 3_000, "openai/gpt-4o-mini", (9_999, 999)), 4),
    ]
    rows = [row for value, offset in values for row in result_rows(value, offset).rows["om_model_calls"]]
    client.insert("om_model_calls", rows, column_names=list(MODEL_CALL_COLUMNS))

    lines = by_day(client, resource="maya")
    assert [(l.day, l.role, l.model, l.calls, l.input_tokens, l.output_tokens, l.unpriced) for l in lines] == [
        ("2025-12-02", "reflector", "om-deterministic/reflector", 1, 800, 80, 1),
        ("2025-12-01", "observer", "openai/gpt-4o-mini", 2, 1_500, 300, 0),
    ]
    assert lines[0].cost_usd is None and lines[1].cost_usd > 0
    assert {l.resource_id for l in by_day(client)} == {"maya", "other"}

    get_settings.cache_clear()
    try:
        out = CliRunner().invoke(app, ["costs", "--resource", "maya", "--days", "100000"],
                                 env={"OM_CLICKHOUSE_DSN": dsn, "COLUMNS": "200"})
    finally:
        get_settings.cache_clear()
    assert out.exit_code == 0, out.output
    assert "gpt-4o-mini" in out.output and "1,500" in out.output and "om-deterministic/reflector" in out.output
    assert "other" not in out.output and "9,999" not in out.output
