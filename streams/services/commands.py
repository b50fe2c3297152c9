"""`om services up|down|status`: the local services a laptop needs for the embedded default.

Only Kafka runs as a separate process; ClickHouse is the chDB engine inside whichever process
uses it, so for ClickHouse these commands just report the DSN and whether a query works.
"""

from __future__ import annotations

import typer
from rich.console import Console

from streams.services.errors import ServiceError
from streams.services.kafka import LocalKafkaBroker, describe
from streams.settings import get_settings

services_app = typer.Typer(help="Start, stop and inspect the local Kafka broker.", no_args_is_help=True)
console = Console()


def _broker() -> LocalKafkaBroker:
    try:
        return LocalKafkaBroker.from_settings(get_settings())
    except ServiceError as exc:
        console.print(f"[red]✗[/] {exc}")
        raise typer.Exit(1) from exc


@services_app.command()
def up() -> None:
    """Start the local Kafka broker (first run resolves its jars from Maven Central)."""
    broker = _broker()
    try:
        started = broker.start(console)
    except ServiceError as exc:
        console.print(f"[red]✗[/] {exc}")
        raise typer.Exit(1) from exc
    verb = "started" if started else "already running"
    console.print(f"[green]✓[/] Kafka {verb} on {broker.bootstrap} ({describe()}, data in {broker.home / 'data'})")
    console.print(f"[green]✓[/] ClickHouse is embedded (chDB); DSN {get_settings().clickhouse_dsn}")


@services_app.command()
def down() -> None:
    """Stop the local Kafka broker started by `om services up` (only that process)."""
    broker = _broker()
    if broker.stop():
        console.print(f"[green]✓[/] Kafka on {broker.bootstrap} stopped")
    else:
        console.print(f"Kafka on {broker.bootstrap} was not running (no live pid in {broker.pid_file})")


@services_app.command()
def status() -> None:
    """Report whether the broker answers and whether ClickHouse runs a query; exit 1 if not."""
    broker = _broker()
    state = broker.status()
    kafka_ok = state.pid is not None and state.healthy
    if kafka_ok:
        console.print(f"[green]✓[/] Kafka: pid {state.pid}, answering on {state.bootstrap} ({describe()})")
    elif state.pid is not None:
        console.print(f"[yellow]![/] Kafka: pid {state.pid} runs but does not answer; see {broker.log_file}")
    else:
        console.print(f"[red]✗[/] Kafka: not running on {state.bootstrap}; start it with `om services up`")
    clickhouse_ok = _clickhouse_status()
    raise typer.Exit(0 if kafka_ok and clickhouse_ok else 1)


def _clickhouse_status() -> bool:
    from streams.clickhouse import ClickHouseConnectError, DataDirectoryLocked, connect, redact

    dsn = get_settings().clickhouse_dsn
    try:
        version = connect(dsn).command("SELECT version()")
    except DataDirectoryLocked as exc:
        console.print(f"[green]✓[/] ClickHouse {redact(dsn)}: served inside process {exc.pid or '?'} (embedded)")
        return True
    except ClickHouseConnectError as exc:
        console.print(f"[yellow]![/] ClickHouse {redact(dsn)}: {exc}")
        return False
    console.print(f"[green]✓[/] ClickHouse {version}: {redact(dsn)} answers queries")
    return True
