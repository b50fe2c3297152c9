"""The `om` command. Each subcommand lives in its own module; this file only wires them up.

To add a command: write a function (or a ``typer.Typer`` group) in its own module and register
it below with ``app.command(...)`` or ``app.add_typer(...)``.
"""

from __future__ import annotations

import typer

from streams.costs_command import costs_command
from streams.eval.command import eval_command
from streams.llm.local_server import model_app
from streams.reader.commands import reader_app
from streams.replay.commands import replay_command
from streams.sdk.commands import context, override, recall, send, status
from streams.sdk.events_command import events_app
from streams.services.commands import services_app
from streams.simulate_cli import simulate_command
from streams.storage_commands import migrate, sink

app = typer.Typer(help="Observational Memory as an event-sourced stream.", no_args_is_help=True)
app.add_typer(services_app, name="services")
app.add_typer(reader_app, name="reader")
app.command()(migrate)
app.command()(sink)
app.command()(send)
app.command()(override)
app.add_typer(events_app, name="events")
app.command()(context)
app.command()(status)
app.command()(recall)
app.command("replay")(replay_command)
app.command("simulate")(simulate_command)
app.command("eval")(eval_command)
app.command("costs")(costs_command)
app.add_typer(model_app, name="model")


@app.command()
def demo() -> None:
    """Round-trip one chat message through Kafka and ClickHouse on the local services."""
    from streams.demo import run_demo

    raise typer.Exit(run_demo())


@app.command()
def run(
    role: str = typer.Option("all", help="all | processor | llm"),
) -> None:
    """Start a worker: the OM processor and/or the LLM workers, until Ctrl-C."""
    from streams.worker import run_worker

    if role not in ("all", "processor", "llm"):
        raise typer.BadParameter("role must be one of: all, processor, llm")
    run_worker(role)  # type: ignore[arg-type]


if __name__ == "__main__":
    app()
