"""The `om` command. Each subcommand lives in its own module; this file only wires them up.

A subcommand's module is imported when that subcommand runs (or when help lists them all), not
with the `om` command itself: `om run` starts a worker, and every restart paid ~125 ms to import
the replay, eval, SDK and cost commands (rich, Pillow) that the worker never uses (issue 20 item 4:
processing again within 2 s of a restart).

To add a command: write a function (or a ``typer.Typer`` group) in its own module and add its
name and ``module:attribute`` to ``SUBCOMMANDS`` below, in the place help should list it.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

SUBCOMMANDS: dict[str, str] = {
    "services": "streams.services.commands:services_app",
    "reader": "streams.reader.commands:reader_app",
    "migrate": "streams.storage_commands:migrate",
    "sink": "streams.storage_commands:sink",
    "send": "streams.sdk.commands:send",
    "override": "streams.sdk.commands:override",
    "events": "streams.sdk.events_command:events_app",
    "context": "streams.sdk.commands:context",
    "status": "streams.sdk.commands:status",
    "recall": "streams.sdk.commands:recall",
    "replay": "streams.replay.commands:replay_command",
    "simulate": "streams.simulate_cli:simulate_command",
    "eval": "streams.eval.command:eval_command",
    "costs": "streams.costs_command:costs_command",
    "model": "streams.llm.local_server:model_app",
}
"""Name → where its function or ``typer.Typer`` group is; listed in this order, before ``demo`` and ``run``."""


def subcommand(name: str) -> TyperCommand | TyperGroup:
    """The click command for one of ``SUBCOMMANDS``, built as ``app.command``/``app.add_typer`` would."""
    module, _, attribute = SUBCOMMANDS[name].partition(":")
    target = getattr(import_module(module), attribute)
    if isinstance(target, typer.Typer):
        command: Any = typer.main.get_group(target)
    else:
        single = typer.Typer(add_completion=False)
        single.command(name)(target)
        command = typer.main.get_command(single)
    command.name = name
    return command


class LazyCommands(TyperGroup):
    """Typer's group, with ``SUBCOMMANDS`` imported when asked for."""

    def list_commands(self, ctx: Any) -> list[str]:
        return [*SUBCOMMANDS, *(name for name in self.commands if name not in SUBCOMMANDS)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in SUBCOMMANDS and cmd_name not in self.commands:
            self.commands[cmd_name] = subcommand(cmd_name)
        return super().get_command(ctx, cmd_name)


app = typer.Typer(help="Observational Memory as an event-sourced stream.", no_args_is_help=True, cls=LazyCommands)


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
