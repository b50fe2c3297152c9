"""``om replay SOURCE``: backfill history into the pipeline, with progress, resume and a summary."""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer
from aiokafka.errors import KafkaConnectionError
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from processors.tokens import get_counter
from streams.om_config import load_config
from streams.replay.checkpoint import CheckpointFile
from streams.replay.runner import ReplayOptions, ReplaySummary, replay
from streams.replay.source import ReplayInputError
from streams.replay.sources import FORMATS, open_source
from streams.sdk.client import OMClient
from streams.settings import Settings, get_settings


class RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        return Text(f"{task.speed or 0:,.0f} msg/s", style="cyan")


class RichReplayProgress:
    """The runner's progress hooks drawn as a rich bar: done/total, messages/s, elapsed, ETA."""

    def __init__(self, progress: Progress, label: str) -> None:
        self.progress, self.label = progress, label
        self.task = None

    def start(self, total: int, done: int) -> None:
        self.task = self.progress.add_task(self.label, total=total, completed=done)

    def advance(self, count: int) -> None:
        self.progress.advance(self.task, count)


def replay_command(
    source: str = typer.Argument(..., help="JSONL file, LoCoMo JSON, Mastra SQLite file (or file: URL), "
                                           "or postgresql:// DSN of a Mastra store"),
    fmt: str = typer.Option(None, "--format", help=f"override detection: {' | '.join(FORMATS)}"),
    rate: float = typer.Option(None, "--rate", min=0.001, help="at most this many messages per second"),
    batch: int = typer.Option(500, min=1, help="messages per acknowledged batch (and checkpoint)"),
    restart: bool = typer.Option(False, help="ignore the checkpoint and send everything again (idempotent)"),
    limit: int = typer.Option(None, min=1, help="stop after this many messages; run again to resume"),
    checkpoint: Path = typer.Option(None, help="checkpoint file (default <OM_DATA_DIR>/replay/checkpoints.json)"),
) -> None:
    """Replay history into the messages topic, keeping ids, timestamps and per-thread order."""
    if fmt is not None and fmt not in FORMATS:
        raise typer.BadParameter(f"--format must be one of {', '.join(FORMATS)}")
    settings = get_settings()
    console = Console()
    options = ReplayOptions(rate=rate, batch=batch, restart=restart, stop_after=limit)
    checkpoints = CheckpointFile(checkpoint or settings.data_dir / "replay" / "checkpoints.json")
    try:
        summary = asyncio.run(_run(settings, source, fmt, options, checkpoints, console))
    except ReplayInputError as error:
        _fail(console, str(error))
    except KafkaConnectionError:
        _fail(console, f"Kafka at {settings.kafka_bootstrap} does not answer; start it with `om services up` "
                       "or set OM_KAFKA_BOOTSTRAP")
    except KeyboardInterrupt:
        _fail(console, "interrupted; run the same command again to resume from the last acknowledged batch")
    _print_summary(console, summary)


async def _run(settings: Settings, spec: str, fmt: str | None, options: ReplayOptions,
               checkpoints: CheckpointFile, console: Console) -> ReplaySummary:
    from streams.worker import ensure_topics  # imports Faust: only when a replay really runs

    source = open_source(spec, fmt)  # type: ignore[arg-type]
    counter = get_counter(load_config(settings).token_counter)
    await ensure_topics(settings)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), RateColumn(),
               TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())
    async with OMClient(settings) as client:
        with Progress(*columns, console=console) as bar:
            return await replay(source, client, checkpoints, counter, options,
                                RichReplayProgress(bar, f"replaying {source.identity.split(':', 1)[0]}"))


def _print_summary(console: Console, summary: ReplaySummary) -> None:
    table = Table(title="replay summary", show_header=False)
    table.add_row("source", summary.source)
    table.add_row("threads", f"{len(summary.threads):,}")
    table.add_row("messages", f"{summary.total:,}")
    table.add_row("tokens", f"{summary.tokens:,}")
    table.add_row("sent this run", f"{summary.sent:,}" + (f" (resumed after {summary.resumed_from:,})"
                                                          if summary.resumed_from else ""))
    table.add_row("time", f"{summary.seconds:.1f} s ({summary.rate:,.0f} msg/s)")
    console.print(table)
    if not summary.completed:
        console.print("[yellow]stopped before the end[/]: run the same command again to resume")
    elif summary.sent == 0:
        console.print("already replayed and unchanged; --restart sends it again (the pipeline ignores repeats)")


def _fail(console: Console, message: str) -> None:
    console.print(f"[red]✗[/] {message}")
    raise typer.Exit(1)
