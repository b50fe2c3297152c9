"""``om costs``: model calls, tokens and cost by day, resource, role and model, from the ledger.

"cached" is the part of the input tokens the provider read from its prompt cache."""

from __future__ import annotations

import time

import typer
from rich.console import Console
from rich.table import Table

from streams.settings import get_settings


def costs_command(
    resource: str = typer.Option("", help="only this resource"),
    days: int = typer.Option(30, min=1, help="the last N days (UTC)"),
) -> None:
    """What the Observer and Reflector calls cost (litellm's offline cost map; — = model not priced)."""
    from streams.clickhouse import connect
    from streams.ledger import by_day, usd
    from streams.migrate import apply_migrations

    client = connect(get_settings().clickhouse_dsn)
    apply_migrations(client)
    since = int(time.time() * 1000) - days * 86_400_000
    lines = by_day(client, since_ms=since, resource=resource)
    table = Table(title=f"model calls, last {days} day(s)" + (f", resource {resource}" if resource else ""))
    for column in ("day", "resource", "role", "model", "calls", "input tokens", "cached", "cache writes",
                   "output tokens", "cost"):
        table.add_column(column, justify="left" if column in ("day", "resource", "role", "model") else "right")
    for line in lines:
        cost = usd(line.cost_usd) + (f" (+{line.unpriced} unpriced)" if line.unpriced and line.cost_usd is not None
                                     else "")
        table.add_row(line.day, line.resource_id, line.role, line.model or "?", f"{line.calls:,}",
                      f"{line.input_tokens:,}", f"{line.cached_input_tokens:,}",
                      f"{line.cache_write_input_tokens:,}", f"{line.output_tokens:,}", cost)
    Console().print(table if lines else "no model calls in the ledger for that period")
