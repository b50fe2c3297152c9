"""``om events tail``: watch lifecycle events as they are committed, filtered, pretty or as JSON lines."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import typer

from schemas.lifecycle import LifecycleEvent
from streams.sdk.cli_common import JsonOption, console, fail, run_with_client
from streams.sdk.client import OMClient
from streams.sdk.events import Since

events_app = typer.Typer(help="Lifecycle events (observation, reflection, buffering, status…).",
                         no_args_is_help=True)


@events_app.command()
def tail(
    types: list[str] = typer.Option(None, "--type", help="event type to show (repeatable), e.g. observation-end"),
    thread: str = typer.Option(None, "--thread", "-t", help="only this thread"),
    resource: str = typer.Option(None, "--resource", "-r", help="only this resource"),
    from_beginning: bool = typer.Option(False, "--from-beginning", help="start at the oldest retained event"),
    since: int = typer.Option(None, help="start at this UTC epoch ms instead of now"),
    limit: int = typer.Option(None, help="exit after this many matching events"),
    timeout: float = typer.Option(None, help="exit after this many seconds (exit 1 if --limit was not reached)"),
    as_json: bool = JsonOption,
) -> None:
    """Follow the events topic (read_committed) until Ctrl-C, --limit or --timeout."""
    start: Since = "beginning" if from_beginning else (since if since is not None else "now")

    async def follow(client: OMClient) -> int:
        seen = 0
        deadline = time.monotonic() + timeout if timeout is not None else None
        async with client.events(types, thread_id=thread, resource_id=resource, since=start) as stream:
            while deadline is None or time.monotonic() < deadline:
                for event in await stream.next_batch():
                    if as_json:
                        typer.echo(event.model_dump_json(exclude_none=True))  # one JSON object per line
                    else:
                        _pretty(event)
                    seen += 1
                    if limit is not None and seen >= limit:
                        return seen
        return seen

    try:
        seen = run_with_client(follow)
    except KeyboardInterrupt:
        return
    if limit is not None and seen < limit:
        fail(f"only {seen} of {limit} matching event(s) within {timeout} s")


def _pretty(event: LifecycleEvent) -> None:
    details: dict[str, Any] = {"op": getattr(event, "operation_type", None), "cycle": getattr(event, "cycle_id", None)}
    for name in ("tokens_observed", "observation_tokens", "tokens_buffered", "tokens_activated", "error"):
        details[name] = getattr(event, name, None)
    covered = getattr(event, "message_ids", None)
    if covered:
        details["messages"] = len(covered)
    if event.type == "status":
        details["messages_tokens"] = event.windows.active.messages.tokens
    shown = " ".join(f"{k}={v}" for k, v in details.items() if v is not None)
    at = datetime.fromtimestamp(event.at / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")
    console.print(f"[dim]{at}[/] [bold]{event.type}[/] {event.key} {shown}", highlight=False)
