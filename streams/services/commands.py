"""`om services up|down|status`: the local services a laptop needs for the embedded default.

Only Kafka runs as a separate process; ClickHouse is the chDB engine inside whichever process
uses it, so for ClickHouse these commands just report the DSN and whether a query works.
``up --brokers 3`` starts a local three-node cluster instead of the single broker
(streams/services/kafka_cluster.py); ``down`` and ``status`` cover whichever of the two runs.
"""

from __future__ import annotations

import asyncio
import time
from typing import Annotated

import typer
from rich.console import Console

from streams.services.errors import ServiceError
from streams.services.kafka import LocalKafkaBroker, describe
from streams.services.kafka_cluster import LocalKafkaCluster
from streams.services.kafka_topics import partition_states
from streams.settings import get_settings

services_app = typer.Typer(help="Start, stop and inspect the local Kafka broker.", no_args_is_help=True)
console = Console()


def _broker() -> LocalKafkaBroker:
    try:
        return LocalKafkaBroker.from_settings(get_settings())
    except ServiceError as exc:
        console.print(f"[red]✗[/] {exc}")
        raise typer.Exit(1) from exc


def _cluster(size: int | None = None) -> LocalKafkaCluster:
    _broker()  # the same refusal of a non-local OM_KAFKA_BOOTSTRAP
    return LocalKafkaCluster.from_settings(get_settings(), size)


def _cluster_running() -> LocalKafkaCluster | None:
    cluster = _cluster()
    return cluster if any(node.status().pid is not None for node in cluster.nodes) else None


@services_app.command()
def up(
    brokers: Annotated[int, typer.Option("--brokers", min=1, max=9, help="Kafka nodes: 1 (the default broker) "
                                         "or a local KRaft cluster of N, replication min(N, 3)")] = 1,
) -> None:
    """Start the local Kafka broker, or cluster (first run resolves the jars from Maven Central)."""
    if brokers > 1:
        _cluster_up(brokers)
        return
    broker = _broker()
    try:
        started = broker.start(console)
    except ServiceError as exc:
        console.print(f"[red]✗[/] {exc}")
        raise typer.Exit(1) from exc
    verb = "started" if started else "already running"
    console.print(f"[green]✓[/] Kafka {verb} on {broker.bootstrap} ({describe()}, data in {broker.home / 'data'})")
    console.print(f"[green]✓[/] ClickHouse is embedded (chDB); DSN {get_settings().clickhouse_dsn}")


def _cluster_up(size: int) -> None:
    cluster = _cluster(size)
    began = time.monotonic()
    try:
        started = cluster.start(console)
    except ServiceError as exc:
        console.print(f"[red]✗[/] {exc}")
        raise typer.Exit(1) from exc
    verb = f"started in {time.monotonic() - began:.0f} s" if started else "already running"
    console.print(f"[green]✓[/] Kafka cluster {verb} ({describe(size)}, data in {cluster.home})")
    console.print(f"    every om command that uses it: export OM_KAFKA_BOOTSTRAP={cluster.bootstrap}", soft_wrap=True)
    console.print(f"[green]✓[/] ClickHouse is embedded (chDB); DSN {get_settings().clickhouse_dsn}")


@services_app.command()
def down() -> None:
    """Stop the local Kafka broker or cluster started by `om services up` (only those processes)."""
    cluster = _cluster_running()
    if cluster is not None:
        stopped = cluster.stop()
        console.print(f"[green]✓[/] Kafka cluster nodes {', '.join(map(str, stopped))} stopped ({cluster.bootstrap})")
    broker = _broker()
    if broker.stop():
        console.print(f"[green]✓[/] Kafka on {broker.bootstrap} stopped")
    elif cluster is None:
        console.print(f"Kafka on {broker.bootstrap} was not running (no live pid in {broker.pid_file})")


@services_app.command()
def status() -> None:
    """Report whether the broker answers and whether ClickHouse runs a query; exit 1 if not."""
    cluster = _cluster_running()
    if cluster is not None:
        kafka_ok = _cluster_status(cluster)
        clickhouse_ok = _clickhouse_status()
        raise typer.Exit(0 if kafka_ok and clickhouse_ok else 1)
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


def _cluster_status(cluster: LocalKafkaCluster) -> bool:
    healthy = 0
    for node in cluster.nodes:
        state = node.status()
        if state.pid is not None and state.healthy:
            healthy += 1
            console.print(f"[green]✓[/] Kafka node {node.node_id}: pid {state.pid}, answering on {state.bootstrap}")
        elif state.pid is not None:
            console.print(f"[yellow]![/] Kafka node {node.node_id}: pid {state.pid} runs but does not answer; "
                          f"see {node.log_file}")
        else:
            console.print(f"[red]✗[/] Kafka node {node.node_id}: not running on {state.bootstrap}; start it with "
                          f"`om services up --brokers {cluster.size}`")
    console.print(f"    {healthy} of {cluster.size} nodes answer ({describe(cluster.size)}); "
                  f"OM_KAFKA_BOOTSTRAP={cluster.bootstrap}", soft_wrap=True)
    if healthy:
        _leaders(cluster)
    return healthy == cluster.size


def _leaders(cluster: LocalKafkaCluster) -> None:
    """Who leads the pipeline's partitions, and how many lack a replica: what to kill, and whether
    a node that came back has caught up."""
    prefix = get_settings().topic_prefix
    try:
        states = asyncio.run(partition_states(cluster.bootstrap, prefix))
    except Exception as exc:  # noqa: BLE001 - a status line, not a failure of the status command
        console.print(f"[yellow]![/] partition leaders of {prefix}.*: not readable ({type(exc).__name__})")
        return
    if not states:
        console.print(f"    no {prefix}.* topics yet (the first `om run` creates them)")
        return
    led = {node.node_id: 0 for node in cluster.nodes}
    for leader, _, _ in states.values():
        led[leader] = led.get(leader, 0) + 1
    short = sum(1 for _, replicas, isr in states.values() if len(isr) < len(replicas))
    console.print(f"    {len(states)} partitions of {prefix}.*/{prefix}-*: leaders "
                  + ", ".join(f"node {n} → {c}" for n, c in sorted(led.items()) if n >= 0)
                  + (f", {led[-1]} without a leader" if led.get(-1) else "")
                  + f"; {short} under-replicated", soft_wrap=True)


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
