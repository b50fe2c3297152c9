"""The cost ledger's rows (streams/sink/rows.py, streams/costs.py): billed tokens, the cached input
ones apart, priced offline."""

from __future__ import annotations

import subprocess
import sys

import litellm
import pytest

from schemas.jobs import ObserveResult, ReflectResult, Usage
from streams.costs import call_cost
from streams.sink.rows import MODEL_CALL_COLUMNS, result_rows

HEADER = {"cycle_id": "c1", "generation": 0, "ok": True, "started_at": 1_000, "completed_at": 2_500,
          "usage": Usage(input_tokens=1_200, output_tokens=300, cached_input_tokens=1_024), "attempts": 2}


def ledger_row(result: ObserveResult | ReflectResult, offset: int = 7) -> dict:
    rows = result_rows(result.to_bytes(), offset).rows
    assert list(rows) == ["om_model_calls"]
    return dict(zip(MODEL_CALL_COLUMNS, rows["om_model_calls"][0], strict=True))


def test_a_priced_observer_call_carries_its_tokens_and_cost_by_resource_and_model() -> None:
    row = ledger_row(ObserveResult(**HEADER, key="thread:t1", mode="sync", model="openai/gpt-4o-mini",
                                   resource_id="maya"))
    prices = litellm.model_cost["gpt-4o-mini"]
    assert row["cost_usd"] == pytest.approx(176 * prices["input_cost_per_token"] + 300 * prices["output_cost_per_token"]
                                            + 1_024 * prices["cache_read_input_token_cost"])
    assert row["cost_usd"] > 0
    assert {k: row[k] for k in ("resource_id", "lookup_key", "cycle_id", "role", "model", "mode", "ok", "attempts",
                                "input_tokens", "cached_input_tokens", "output_tokens", "started_at", "completed_at",
                                "version")} == {
        "resource_id": "maya", "lookup_key": "thread:t1", "cycle_id": "c1", "role": "observer",
        "model": "openai/gpt-4o-mini", "mode": "sync", "ok": 1, "attempts": 2, "input_tokens": 1_200,
        "cached_input_tokens": 1_024, "output_tokens": 300, "started_at": 1_000, "completed_at": 2_500, "version": 7}


def test_an_unpriced_model_has_no_cost_rather_than_zero() -> None:
    row = ledger_row(ReflectResult(**HEADER, key="thread:t1", mode="background", model="om-deterministic/reflector",
                                   resource_id="maya"))
    assert (row["role"], row["cost_usd"], row["input_tokens"]) == ("reflector", None, 1_200)
    assert call_cost(None, 10, 10) is None


def test_a_result_from_an_older_worker_falls_back_to_the_resource_key() -> None:
    assert ledger_row(ObserveResult(**HEADER, key="resource:maya", mode="sync"))["resource_id"] == "maya"
    old = ledger_row(ObserveResult(**HEADER, key="thread:t1", mode="sync"))
    assert (old["resource_id"], old["model"], old["cost_usd"]) == ("", "", None)
    older = ObserveResult(**{**HEADER, "usage": Usage(input_tokens=1_200, output_tokens=300)}, key="thread:t1",
                          mode="sync")
    assert ledger_row(older)["cached_input_tokens"] == 0


def test_pricing_the_offline_model_never_imports_litellm() -> None:
    """The processor's sink prices every result; for the offline model that must not cost litellm's
    import (seconds of CPU on the sink's thread)."""
    code = ("import sys; from streams.costs import call_cost; "
            "assert call_cost('om-deterministic/observer', 10, 10) is None; "
            "print('litellm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
