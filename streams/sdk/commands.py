"""``om send``, ``om override``, ``om context``, ``om status``, ``om recall``: the SDK from a shell."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import typer
from rich.json import JSON
from rich.panel import Panel
from rich.table import Table

from streams.sdk.cli_common import (
    JsonOption,
    ResourceOption,
    TokenOption,
    UrlOption,
    console,
    fail,
    run_with_client,
)


def send(
    text: str = typer.Argument(None, help="message text (or use --file)"),
    thread: str = typer.Option(None, "--thread", "-t", help="thread id (required with TEXT)"),
    resource: str = typer.Option(None, "--resource", "-r", help="resource id (Mastra: the user)"),
    role: str = typer.Option("user", help="user | assistant | system | tool"),
    message_id: str = typer.Option(None, "--id", help="message id; re-sending an id updates, never duplicates"),
    file: Path = typer.Option(None, "--file", "-f", exists=True, dir_okay=False,
                              help="JSON file: one message or a list of messages (snake_case or camelCase)"),
) -> None:
    """Produce chat messages to the messages topic and wait for the broker's acknowledgement."""
    if (text is None) == (file is None):
        fail("give either TEXT (with --thread) or --file")
    if file is not None:
        loaded = orjson.loads(file.read_bytes())
        messages: list[Any] = loaded if isinstance(loaded, list) else [loaded]
    else:
        if not thread:
            fail("--thread is required when sending TEXT")
        messages = [{"id": message_id or f"msg-{uuid.uuid4().hex}", "thread_id": thread, "resource_id": resource,
                     "role": role, "created_at": int(time.time() * 1000), "parts": [{"type": "text", "text": text}]}]
    sent = run_with_client(lambda client: client.send_many(messages))
    for message in sent:
        console.print(f"[green]✓[/] {message.id} → {message.thread_id}")


def override(
    thread: str = typer.Argument(..., help="thread id"),
    resource: str = typer.Option(None, "--resource", "-r", help="resource id (Mastra: the user)"),
    message_tokens: int = typer.Option(None, "--message-tokens", min=1, help="observation threshold for this thread"),
    observation_tokens: int = typer.Option(None, "--observation-tokens", min=1,
                                           help="reflection threshold for this thread"),
) -> None:
    """Change one thread's thresholds at run time (Mastra's updateRecordConfig)."""
    config: dict[str, Any] = {}
    if message_tokens is not None:
        config["observation"] = {"message_tokens": message_tokens}
    if observation_tokens is not None:
        config["reflection"] = {"observation_tokens": observation_tokens}
    if not config:
        fail("give --message-tokens and/or --observation-tokens")
    run_with_client(lambda client: client.update_record_config(thread, config, resource_id=resource))
    console.print(f"[green]✓[/] override sent for {thread}: {orjson.dumps(config).decode()}")


def context(
    thread: str = typer.Argument(..., help="thread id"),
    resource: str = ResourceOption,
    wait_for: str = typer.Option(None, "--wait-for", help="message id to wait for (read-your-writes)"),
    timeout: float = typer.Option(5.0, help="seconds to wait for --wait-for (at most 30)"),
    as_json: bool = JsonOption,
    token: str = TokenOption,
    url: str = UrlOption,
) -> None:
    """The context an agent would receive now: observations, continuation and unobserved messages."""
    answer = run_with_client(lambda c: c.context(thread, resource, wait_for_message_id=wait_for, timeout=timeout),
                             token=token, url=url)
    if as_json:
        console.print_json(answer.model_dump_json())
        return
    for block in answer.system:
        console.print(Panel(block, title="system", title_align="left"))
    table = Table("role", "at", "id", "text", title=f"{len(answer.messages)} unobserved message(s)")
    for message in answer.messages:
        text = " ".join(getattr(p, "text", "") for p in message.parts).strip()
        at = datetime.fromtimestamp(message.created_at / 1000, UTC).strftime("%Y-%m-%d %H:%M")
        table.add_row(message.role, at, message.id, text[:120])
    console.print(table)


def status(
    thread: str = typer.Argument(..., help="thread id"),
    resource: str = ResourceOption,
    as_json: bool = JsonOption,
    token: str = TokenOption,
    url: str = UrlOption,
) -> None:
    """The newest status of the thread's record: token windows, buffered chunks, generation."""
    answer = run_with_client(lambda c: c.status(thread, resource), token=token, url=url)
    if as_json or answer.status is None:
        console.print_json(answer.model_dump_json())
        return
    windows = answer.status.windows
    table = Table("window", "tokens", "threshold / status", title=f"{thread} (generation {answer.status.generation})")
    table.add_row("messages", str(windows.active.messages.tokens), str(windows.active.messages.threshold))
    table.add_row("observations", str(windows.active.observations.tokens), str(windows.active.observations.threshold))
    table.add_row("buffered observations", str(windows.buffered.observations.observation_tokens),
                  f"{windows.buffered.observations.chunks} chunk(s), {windows.buffered.observations.status}")
    table.add_row("buffered reflection", str(windows.buffered.reflection.observation_tokens),
                  windows.buffered.reflection.status)
    console.print(table)
    if answer.status.applied_through is not None:
        console.print(f"applied through message {answer.status.applied_through.message_id}")


def recall(
    request: str = typer.Argument("{}", help='JSON recall request, e.g. \'{"mode": "threads"}\''),
    resource: str = ResourceOption,
    mode: str = typer.Option(None, help="messages | threads | search"),
    thread: str = typer.Option(None, "--thread", "-t", help="threadId to browse"),
    query: str = typer.Option(None, help="search query (mode search)"),
    cursor: str = typer.Option(None, help="message id to page around"),
    as_json: bool = JsonOption,
    token: str = TokenOption,
    url: str = UrlOption,
) -> None:
    """One call of the agent's recall tool (spec §8); flags override fields of REQUEST."""
    body = orjson.loads(request)
    if not isinstance(body, dict):
        fail("REQUEST must be a JSON object")
    body.update({k: v for k, v in (("mode", mode), ("threadId", thread), ("query", query), ("cursor", cursor)) if v})
    answer = run_with_client(lambda c: c.recall(body, resource), token=token, url=url)
    if as_json:
        console.print_json(orjson.dumps(answer).decode())
    elif "error" in answer:
        fail(f"recall refused: {answer['error']}")
    else:
        rendered = next((answer[k] for k in ("messages", "threads", "results") if isinstance(answer.get(k), str)), None)
        if rendered:
            console.print(rendered, markup=False, highlight=False)
        else:
            console.print(JSON.from_data(answer))
