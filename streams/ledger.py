"""Reading the cost ledger (``om_model_calls``, written by the sink from the results topic).

One question, asked by ``om costs`` and the memory view alike: model calls, billed tokens (input,
of which cached and cache-written, and output) and cost by UTC day, resource, role and model. Bound to one resource
when named; ids are bound as parameters. A cost is summed over the priced calls only, and the
unpriced ones are counted beside it, so "—" never hides behind a zero.
"""

from __future__ import annotations

from dataclasses import dataclass

from clickhouse_connect.driver.client import Client

_BY_DAY = """
SELECT toDate(toDateTime(intDiv(completed_at, 1000), 'UTC')) AS day, resource_id, role, model,
       count(), sum(input_tokens), sum(cached_input_tokens), sum(cache_write_input_tokens), sum(output_tokens),
       sum(cost_usd),
       countIf(cost_usd IS NULL)
FROM om_model_calls FINAL
WHERE completed_at >= {since:Int64} AND ({resource:String} = '' OR resource_id = {resource:String})
GROUP BY day, resource_id, role, model
ORDER BY day DESC, resource_id, role, model
LIMIT {limit:UInt32}
"""


@dataclass(frozen=True)
class CostLine:
    day: str
    resource_id: str
    role: str
    model: str
    calls: int
    input_tokens: int
    """Every prompt token, the cached ones included."""
    cached_input_tokens: int
    """The part of the input tokens read from the provider's prompt cache (priced lower)."""
    cache_write_input_tokens: int
    """The part of the input tokens written to the provider's prompt cache (Anthropic: priced higher)."""
    output_tokens: int
    cost_usd: float | None
    """Of the priced calls; None when no call of the line is priced."""
    unpriced: int


def by_day(client: Client, *, since_ms: int = 0, resource: str = "", limit: int = 1000) -> list[CostLine]:
    rows = client.query(_BY_DAY, parameters={"since": since_ms, "resource": resource, "limit": limit}).result_rows
    return [CostLine(str(day), res, role, model, int(n), int(i), int(c), int(w), int(o),
                     None if cost is None else float(cost), int(unpriced))
            for day, res, role, model, n, i, c, w, o, cost, unpriced in rows]


def usd(cost: float | None) -> str:
    if cost is None:
        return "—"
    return f"${cost:,.4f}" if cost < 1 else f"${cost:,.2f}"
