"""The cost ledger in ClickHouse: rows from results, read by day/resource/role/model, and ``om costs``;
cached input tokens end to end, and a ledger stored before they were counted."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemas.jobs import ObserveResult, ReflectResult, Usage
from streams.cli import app
from streams.clickhouse import connect
from streams.costs import call_cost
from streams.ledger import by_day
from streams.migrate import MIGRATIONS_DIR, apply_migrations
from streams.settings import get_settings
from streams.sink.rows import MODEL_CALL_COLUMNS, result_rows

pytestmark = pytest.mark.integration

DAY = 86_400_000
T = 1_764_547_200_000  # 2025-12-01 00:00 UTC


def result(kind: type, cycle: str, resource: str, at: int, model: str, tokens: tuple[int, int],
           cached: int = 0, written: int = 0) -> bytes:
    extra = {"mode": "sync"} if kind is ObserveResult else {"mode": "background"}
    usage = Usage(input_tokens=tokens[0], output_tokens=tokens[1], cached_input_tokens=cached,
                  cache_write_input_tokens=written)
    return kind(cycle_id=cycle, key=f"thread:{resource}-t", generation=0, ok=True, started_at=at - 500,
                completed_at=at, usage=usage, model=model, resource_id=resource, **extra).to_bytes()


def om_costs(dsn: str, *args: str) -> str:
    get_settings.cache_clear()
    try:
        out = CliRunner().invoke(app, ["costs", *args], env={"OM_CLICKHOUSE_DSN": dsn, "COLUMNS": "200"})
    finally:
        get_settings.cache_clear()
    assert out.exit_code == 0, out.output
    return out.output


def test_the_ledger_sums_calls_by_day_resource_role_and_model_and_om_costs_prints_it(clickhouse_dsn: str) -> None:
    dsn = f"{clickhouse_dsn}?database=t_{uuid.uuid4().hex[:12]}"
    client = connect(dsn)
    apply_migrations(client)
    values = [
        (result(ObserveResult, "o1", "maya", T + 1_000, "openai/gpt-4o-mini", (1_000, 200)), 1),
        (result(ObserveResult, "o1", "maya", T + 1_000, "openai/gpt-4o-mini", (1_000, 200)), 9),  # redelivered
        (result(ObserveResult, "o2", "maya", T + 2_000, "openai/gpt-4o-mini", (500, 100), cached=384), 2),
        (result(ReflectResult, "r1", "maya", T + DAY + 5, "om-deterministic/reflector", (800, 80)), 3),
        (result(ObserveResult, "x1", "other", T + 3_000, "openai/gpt-4o-mini", (9_999, 999)), 4),
    ]
    rows = [row for value, offset in values for row in result_rows(value, offset).rows["om_model_calls"]]
    client.insert("om_model_calls", rows, column_names=list(MODEL_CALL_COLUMNS))

    lines = by_day(client, resource="maya")
    assert [(l.day, l.role, l.model, l.calls, l.input_tokens, l.cached_input_tokens, l.output_tokens, l.unpriced)
            for l in lines] == [
        ("2025-12-02", "reflector", "om-deterministic/reflector", 1, 800, 0, 80, 1),
        ("2025-12-01", "observer", "openai/gpt-4o-mini", 2, 1_500, 384, 300, 0),
    ]
    assert lines[0].cost_usd is None
    model = "openai/gpt-4o-mini"
    priced = call_cost(model, 1_000, 200) + call_cost(model, 500, 100, cached_input_tokens=384)
    assert lines[1].cost_usd == pytest.approx(priced)
    assert priced < call_cost(model, 1_500, 300)  # the cached tokens are priced lower
    assert {l.resource_id for l in by_day(client)} == {"maya", "other"}

    output = om_costs(dsn, "--resource", "maya", "--days", "100000")
    assert "gpt-4o-mini" in output and "1,500" in output and "om-deterministic/reflector" in output
    assert "cached" in output and "384" in output
    assert "other" not in output and "9,999" not in output


def test_a_ledger_stored_before_cached_tokens_keeps_its_rows_and_reads_them_as_uncached(
        clickhouse_dsn: str, tmp_path: Path) -> None:
    dsn = f"{clickhouse_dsn}?database=t_{uuid.uuid4().hex[:12]}"
    client = connect(dsn)
    before = tmp_path / "migrations"
    before.mkdir()
    for path in MIGRATIONS_DIR.glob("*.sql"):
        if path.name < "010":
            shutil.copy(path, before / path.name)
    apply_migrations(client, before)
    old_columns = [c for c in MODEL_CALL_COLUMNS if c not in ("cached_input_tokens", "cache_write_input_tokens")]
    old_row = ["maya", "thread:maya-t", "o1", "observer", "openai/gpt-4o-mini", "sync", 1, 1, 1_000, 200, 0.01,
               T, T + 1_000, 1]
    client.insert("om_model_calls", [old_row], column_names=old_columns)

    assert 10 in apply_migrations(client)
    rows = result_rows(result(ObserveResult, "o2", "maya", T + 2_000, "openai/gpt-4o-mini", (500, 100), cached=128),
                       2).rows["om_model_calls"]
    client.insert("om_model_calls", rows, column_names=list(MODEL_CALL_COLUMNS))
    [line] = by_day(client, resource="maya")
    assert (line.calls, line.input_tokens, line.cached_input_tokens, line.output_tokens) == (2, 1_500, 128, 300)
    assert apply_migrations(client) == []


def test_cache_writes_are_kept_apart_and_priced_with_their_surcharge(clickhouse_dsn: str) -> None:
    dsn = f"{clickhouse_dsn}?database=t_{uuid.uuid4().hex[:12]}"
    client = connect(dsn)
    apply_migrations(client)
    model = "anthropic/claude-sonnet-4-5-20250929"
    value = result(ObserveResult, "a1", "maya", T + 1_000, model, (3_000, 200), cached=500, written=2_000)
    client.insert("om_model_calls", result_rows(value, 1).rows["om_model_calls"], column_names=list(MODEL_CALL_COLUMNS))
    [line] = by_day(client, resource="maya")
    assert (line.input_tokens, line.cached_input_tokens, line.cache_write_input_tokens) == (3_000, 500, 2_000)
    assert line.cost_usd == pytest.approx(call_cost(model, 3_000, 200, 500, 2_000))
    assert line.cost_usd > call_cost(model, 3_000, 200, 500), "the 1.25x surcharge of the writes is billed"
    output = om_costs(dsn, "--resource", "maya", "--days", "100000")
    assert "cache writes" in output and "2,000" in output
