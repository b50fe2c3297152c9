"""The `om` command. Each subcommand lives in its own module; this file only wires them up.

To add a command: write a function (or a ``typer.Typer`` group) in its own module and register
it below with ``app.command(...)`` or ``app.add_typer(...)``.
"""

from __future__ import annotations

import typer

from streams.services.commands import services_app

app = typer.Typer(help="Observational Memory as an event-sourced stream.", no_args_is_help=True)
app.add_typer(services_app, name="services")


@app.command()
def demo() -> None:
    """Round-trip one chat message through Kafka and ClickHouse on the local services."""
    from streams.demo import run_demo

    raise typer.Exit(run_demo())
