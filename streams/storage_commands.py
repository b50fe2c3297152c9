"""``om migrate`` and ``om sink``: the ClickHouse schema and the sink as commands."""

from __future__ import annotations

import asyncio

import typer

from streams.settings import get_settings


def migrate() -> None:
    """Apply the ClickHouse migrations the database lacks (idempotent)."""
    from streams.clickhouse import connect
    from streams.migrate import apply_migrations

    applied = apply_migrations(connect(get_settings().clickhouse_dsn))
    typer.echo(f"applied {len(applied)} migration(s): {applied}" if applied else "schema up to date")


def sink() -> None:
    """Run the ClickHouse sink alone (for a server DSN; embedded, the worker hosts it)."""
    from streams.sink.main import run_sink

    asyncio.run(run_sink(get_settings()))
