"""``om replay SOURCE``: backfill history into the pipeline, with progress, resume and a summary.

A broker that is away or electing a leader pauses the replay with progress lines (for up to
``OM_KAFKA_RETRY_S`` seconds without an acknowledgement); past that, or on any other Kafka error, it
ends with one line saying to run the same command again, which resumes after the last
acknowledged batch (streams/replay/checkpoint.py).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer
from aiokafka.errors import KafkaConnectionError, KafkaError
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
from streams.sdk.cli_common import quiet_kafka_logs
from streams.sdk.client import OMClient
from streams.services.kafka_retry import Deadline, KafkaUnavailable, describe, ride_through
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
    dry_run: bool = typer.Option(False, "--dry-run", help="read and report what would be replayed; send nothing"),
    messages_only: bool = typer.Option(False, "--messages-only",
                                       help="Mastra stores: ignore OM records, replay messages to be observed afresh"),
) -> None:
    """Replay history into the messages topic, keeping ids, timestamps and per-thread order."""
    if fmt is not None and fmt not in FORMATS:
        raise typer.BadParameter(f"--format must be one of {', '.join(FORMATS)}")
    settings = get_settings()
    console = Console()
    quiet_kafka_logs()
    options = ReplayOptions(rate=rate, batch=batch, restart=restart, stop_after=limit, dry_run=dry_run)
    checkpoints = CheckpointFile(checkpoint or settings.data_dir / "replay" / "checkpoints.json")
    try:
        summary = asyncio.run(_run(settings, source, fmt, options, checkpoints, console, not messages_only))
    except ReplayInputError as error:
        _fail(console, str(error))
    except KafkaUnavailable as error:
        _fail(console, f"{error}; the replay resumes after the last acknowledged batch")
    except KafkaConnectionError:
        _fail(console, f"Kafka at {settings.kafka_bootstrap} does not answer; start it with `om services up` "
                       "or set OM_KAFKA_BOOTSTRAP")
    except KafkaError as error:
        _fail(console, f"Kafka refused the replay ({describe(error)}); fix that and run the same command again "
                       "to resume from the last acknowledged batch")
    except KeyboardInterrupt:
        _fail(console, "interrupted; run the same command again to resume from the last acknowledged batch")
    _print_summary(console, summary, dry_run)


async def _run(settings: Settings, spec: str, fmt: str | None, options: ReplayOptions,
               checkpoints: CheckpointFile, console: Console, import_om: bool) -> ReplaySummary:
    source = open_source(spec, fmt, import_om=import_om)  # type: ignore[arg-type]
    counter = get_counter(load_config(settings).token_counter)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), RateColumn(),
               TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())
    label = f"{'reading' if options.dry_run else 'replaying'} {source.identity.split(':', 1)[0]}"
    if options.dry_run:
        with Progress(*columns, console=console) as bar:
            return await replay(source, None, checkpoints, counter, options, RichReplayProgress(bar, label))
    from streams.worker import ensure_topics  # imports Faust: only when a replay really runs

    def report(line: str) -> None:
        console.print(f"[yellow]…[/] {line}", highlight=False)

    await ride_through(lambda: ensure_topics(settings), bootstrap=settings.kafka_bootstrap,
                       deadline=Deadline(settings.kafka_retry_s), report=report)
    async with OMClient(settings, report=report) as client:
        with Progress(*columns, console=console) as bar:
            return await replay(source, client, checkpoints, counter, options, RichReplayProgress(bar, label))


def _print_summary(console: Console, summary: ReplaySummary, dry_run: bool = False) -> None:
    table = Table(title="replay summary", show_header=False)
    table.add_row("source", summary.source)
    table.add_row("threads", f"{len(summary.threads):,}")
    table.add_row("messages", f"{summary.total:,}")
    table.add_row("tokens", f"{summary.tokens:,}")
    table.add_row("sent this run", f"{summary.sent:,}" + (f" (resumed after {summary.resumed_from:,})"
                                                          if summary.resumed_from else ""))
    table.add_row("time", f"{summary.seconds:.1f} s ({summary.rate:,.0f} msg/s)")
    if summary.imports is not None:
        tally = summary.imports
        table.add_row("OM records" + ("" if dry_run else " imported"), f"{tally.records:,} ({tally.generations:,} generations, "
                                             f"{summary.import_parts_sent:,} parts sent)")
        table.add_row("  observations", f"{tally.observations:,} records with active observations")
        table.add_row("  buffered", f"{tally.chunks:,} chunks, {tally.buffered_reflections:,} reflections")
        table.add_row("  threads", f"{tally.titles:,} titles, {tally.hints:,} with continuation hints")
        table.add_row("  working memory", f"{tally.working_memory:,} blocks")
        table.add_row("  messages", f"{tally.observed_messages:,} already observed by Mastra, "
                                    f"{tally.unobserved_messages:,} still unobserved")
        for reason, count in sorted(tally.skipped.items()):
            table.add_row("  skipped", f"{count:,} {reason}")
    console.print(table)
    if not summary.completed:
        console.print("[yellow]stopped before the end[/]: run the same command again to resume")
    elif dry_run:
        console.print("dry run: nothing was sent; run without --dry-run to replay")
    elif summary.sent == 0:
        console.print("already replayed and unchanged; --restart sends it again (the pipeline ignores repeats)")


def _fail(console: Console, message: str) -> None:
    console.print(f"[red]✗[/] {message}")
    raise typer.Exit(1)
