"""`om demo`: the whole pipeline on the embedded default, on a bundled sample conversation.

It starts the local broker, a worker (processor, LLM workers, ClickHouse sink and reader in one
process — the embedded mode), replays a multi-day conversation written for this project, waits for
observation and reflection, and prints the observation log, the context an agent would receive,
token counts before and after (:mod:`streams.demo_report`), whether a handful of facts from the
conversation are still in that context, and the lifecycle events seen. The model is the offline
deterministic one — string rules, not a language model — unless ``OM_MODEL`` names a real provider
(whose API key must be set).

The thresholds are small so that a four-day, 5,400-token conversation goes through observation,
activation and several reflections; buffered observations activate once the thread has been idle
for an hour (``activateAfterIdle``), as when the user comes back the next day, and the demo waits
for that. The last few messages (less than one buffering interval) stay unobserved, as in Mastra.
The memory view (streams/ui/) is served by the worker's reader: the demo prints its URL when the
worker is up and, at a terminal, keeps the worker running after the report until Enter.

Each run uses fresh topics and a fresh ClickHouse directory under ``<data dir>/demo/``, so runs
never mix.
"""

from __future__ import annotations

import asyncio
import sys
import time
import urllib.parse
import urllib.request
from collections import Counter
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.panel import Panel
from rich.progress import Progress
from rich.table import Table

from schemas.lifecycle import decode_event
from schemas.messages import ChatMessage, TextPart
from streams.demo_report import context_text, facts, measure
from streams.services.errors import ServiceError
from streams.services.kafka import LocalKafkaBroker
from streams.services.kafka_health import is_healthy
from streams.services.worker_process import WorkerHandle, free_port
from streams.settings import Settings, get_settings
from streams.topics import Topics
from streams.worker import ensure_topics

THREAD, RESOURCE, TOKEN = "maya-assistant", "maya", "demo-token"
DEMO_CONFIG = {
    "observation": {"messageTokens": 300, "bufferActivation": 1, "activateAfterIdle": "1h"},
    "reflection": {"observationTokens": 800},
}
WAIT_S = 120.0


def load_sample(today: datetime | None = None) -> list[ChatMessage]:
    """The bundled conversation: four days (ending the day before ``today``, UTC midnight by
    default) of a trip plan and a work project."""
    text = resources.files("streams.demo_data").joinpath("sample_conversation.jsonl").read_text()
    today = today or datetime.now(UTC)
    start = today.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=4)
    messages = []
    for n, line in enumerate(filter(None, text.splitlines())):
        row = orjson.loads(line)
        hour, minute = map(int, row["time"].split(":"))
        at = start.replace(hour=hour, minute=minute).timestamp() * 1000 + row["day"] * 86_400_000
        messages.append(ChatMessage(id=f"demo-{n:03d}", thread_id=THREAD, resource_id=RESOURCE,
                                    role=row["role"], created_at=int(at), parts=[TextPart(text=row["text"])]))
    return messages


def run_demo(settings: Settings | None = None, console: Console | None = None) -> int:
    """Returns the process exit code; every failure says what to do next."""
    settings = settings or get_settings()
    console = console or Console()
    run_id = datetime.now(UTC).strftime("%Y%m%d%H%M%S")
    workdir = settings.data_dir / "demo" / run_id
    workdir.mkdir(parents=True, exist_ok=True)
    demo = settings.model_copy(update={"topic_prefix": f"demo{run_id}", "partitions": 1,
                                       "reader_port": free_port(), "web_port": free_port()})
    worker = WorkerHandle(_worker_env(demo, workdir), workdir / "worker.log")
    try:
        _ensure_broker(settings, console)
        asyncio.run(ensure_topics(demo))
        with console.status("starting the worker (processor, LLM workers, sink, reader)…"):
            worker.start(f"http://127.0.0.1:{demo.reader_port}/healthz")
        view = f"http://127.0.0.1:{demo.reader_port}/ui/"
        console.print(f"[bold]memory view:[/] {view}  (sign in with the token [bold]{TOKEN}[/]; it updates live)")
        messages = load_sample()
        report = asyncio.run(_replay_and_watch(demo, messages, console))
        _print_report(console, messages, report)
        _keep_view_open(console, view)
    except ServiceError as exc:
        console.print(f"[red]✗[/] {exc}")
        return 1
    finally:
        worker.stop()
    return 0


def _keep_view_open(console: Console, view: str) -> None:
    """At a terminal, the worker (and so the view) stays up until Enter; elsewhere the demo ends."""
    if not sys.stdin.isatty():
        return
    console.print(f"[bold]memory view:[/] {view}  (token [bold]{TOKEN}[/]) — press Enter to stop the worker")
    try:
        input()
    except (EOFError, KeyboardInterrupt):
        pass


def _worker_env(settings: Settings, workdir: Path) -> dict[str, str]:
    config = workdir / "om-config.json"
    config.write_bytes(orjson.dumps(DEMO_CONFIG))
    return {
        "OM_KAFKA_BOOTSTRAP": settings.kafka_bootstrap, "OM_TOPIC_PREFIX": settings.topic_prefix,
        "OM_PARTITIONS": "1", "OM_CONFIG_FILE": str(config), "OM_MODEL": settings.model,
        "OM_CLICKHOUSE_DSN": f"chdb://{workdir / 'clickhouse'}", "OM_DATA_DIR": str(settings.data_dir),
        "OM_READER_PORT": str(settings.reader_port), "OM_WEB_PORT": str(settings.web_port),
        "OM_READER_TOKENS": orjson.dumps({TOKEN: [RESOURCE]}).decode(), "OM_LOG_LEVEL": "WARNING",
    }


def _ensure_broker(settings: Settings, console: Console) -> None:
    host = settings.kafka_bootstrap.split(",")[0].rsplit(":", 1)[0]
    if host in ("127.0.0.1", "localhost"):
        LocalKafkaBroker.from_settings(settings).start(console)
    elif not is_healthy(settings.kafka_bootstrap):
        raise ServiceError(f"Kafka at {settings.kafka_bootstrap} does not answer; check OM_KAFKA_BOOTSTRAP")


async def _replay_and_watch(settings: Settings, messages: list[ChatMessage], console: Console) -> dict[str, Any]:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    topics = Topics.for_prefix(settings.topic_prefix)
    events = AIOKafkaConsumer(topics.events, bootstrap_servers=settings.kafka_bootstrap, group_id=None,
                              auto_offset_reset="earliest", isolation_level="read_committed")
    producer = AIOKafkaProducer(bootstrap_servers=settings.kafka_bootstrap, enable_idempotence=True)
    await events.start()
    await producer.start()
    seen: Counter[str] = Counter()
    settled, last_status = False, None
    try:
        with Progress(console=console) as progress:
            task = progress.add_task("replaying the sample conversation", total=len(messages))
            for message in messages:
                await producer.send(topics.messages, message.to_bytes(), key=f"thread:{THREAD}".encode())
                progress.advance(task)
            await producer.flush()
        deadline = time.monotonic() + WAIT_S
        with console.status("waiting for observation, reflection and the idle activation…"):
            while time.monotonic() < deadline:
                for records in (await events.getmany(timeout_ms=200)).values():
                    for record in records:
                        event = decode_event(record.value)
                        seen[f"{event.type} ({getattr(event, 'operation_type', '-')})" if event.type != "status"
                             else "status"] += 1
                        if event.type == "status":
                            settled, last_status = _settled(event, messages[-1].id), event
                if _done(seen) and settled:
                    break
    finally:
        await producer.stop()
        await events.stop()
    if not (_done(seen) and settled):
        raise ServiceError(f"no reflection within {WAIT_S:.0f} s (events so far: {dict(seen)}); "
                           "see the worker log under the demo directory")
    status = await _materialised(settings, last_status)
    context = await asyncio.to_thread(_get, settings, "context", {"wait_for_message_id": messages[-1].id,
                                                                  "timeout": "30"})
    return {"events": seen, "context": context, "status": status}


def _done(seen: Counter[str]) -> bool:
    reflected = seen["activation (reflection)"] + seen["observation-end (reflection)"]
    return reflected > 0 and seen["buffering-start (observation)"] <= seen["buffering-end (observation)"] + \
        seen["buffering-failed (observation)"]


async def _materialised(settings: Settings, last: Any) -> Any:
    """The reader's status once ClickHouse holds the record of the last status event: the sink runs
    behind the events topic, and a context read before it would show the log before its reflection."""
    deadline = time.monotonic() + 30
    while True:
        status = await asyncio.to_thread(_get, settings, "status", {})
        shown = (status or {}).get("status") or {}
        windows = shown.get("windows", {}).get("active", {})
        if (shown.get("generation") == last.generation
                and windows.get("observations", {}).get("tokens") == last.windows.active.observations.tokens):
            return status
        if time.monotonic() >= deadline:
            raise ServiceError("the reader did not show the final record within 30 s; see the worker log")
        await asyncio.sleep(0.2)


def _settled(status: Any, last_message_id: str) -> bool:
    """Every message taken in and every buffered observation activated. The messages after the last
    buffered chunk (less than one buffering interval) stay unobserved: the agent gets them verbatim."""
    through, buffered = status.applied_through, status.windows.buffered
    return (through is not None and through.message_id == last_message_id and buffered.observations.chunks == 0
            and buffered.observations.status == "idle" and buffered.reflection.status != "running")


def _get(settings: Settings, what: str, query: dict[str, str]) -> Any:
    params = urllib.parse.urlencode({"resource_id": RESOURCE, **query})
    request = urllib.request.Request(
        f"http://127.0.0.1:{settings.reader_port}/v1/threads/{THREAD}/{what}?{params}",
        headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return orjson.loads(response.read())


def _print_report(console: Console, messages: list[ChatMessage], report: dict[str, Any]) -> None:
    context = report["context"]
    chat = context.get("chat") or []
    system = [m["content"] for m in chat if m["role"] == "system"]
    observation_log = "\n\n".join(system[2:]) if len(system) > 2 else "(none yet)"
    console.print(Panel(observation_log, title="observation log (as the agent sees it)", expand=False))
    table = Table(title="context the agent would receive")
    table.add_column("#")
    table.add_column("role")
    table.add_column("content", overflow="fold")
    for n, item in enumerate(chat):
        text = item["content"]
        table.add_row(str(n), item["role"], text if len(text) < 160 else text[:157] + "…")
    console.print(table)
    console.print(_tokens_table(messages, chat, report))
    console.print(_facts_table(messages, chat))
    events = Table(title="lifecycle events seen")
    events.add_column("event")
    events.add_column("count", justify="right")
    for name, count in sorted(report["events"].items()):
        events.add_row(name, str(count))
    console.print(events)
    console.print("[green]✓[/] demo complete: messages → Kafka → processor → LLM workers → ClickHouse → reader")
    console.print("[dim]The offline model is string rules, not a language model: this shows the pipeline and the "
                  "shape of the memory. How well a real model remembers is what `om eval` measures.[/]")


def _tokens_table(messages: list[ChatMessage], chat: list[dict[str, Any]], report: dict[str, Any]) -> Table:
    figures = measure(messages, chat)
    tokens = Table(title="tokens")
    tokens.add_column("measure")
    tokens.add_column("value", justify="right")
    tokens.add_row("raw conversation (all messages)", f"{figures.raw:,}")
    tokens.add_row("whole context sent to the agent now", f"{figures.context:,}")
    tokens.add_row("  of which fixed instructions (the same for any conversation)", f"{figures.fixed:,}")
    tokens.add_row("  of which memory (observations, hints, unobserved messages)", f"{figures.memory:,}")
    tokens.add_row("[bold]ratio: raw conversation / whole context[/]", f"[bold]{figures.ratio:.2f}×[/]")
    tokens.add_row("  memory only: raw conversation / memory", f"{figures.memory_ratio:.2f}×")
    windows = ((report.get("status") or {}).get("status") or {}).get("windows", {}).get("active", {})
    for name, window in windows.items():
        tokens.add_row(f"{name} window (tokens / threshold)", f"{window['tokens']:,} / {window['threshold']:,}")
    return tokens


def _facts_table(messages: list[ChatMessage], chat: list[dict[str, Any]]) -> Table:
    text = context_text(chat)
    last_day = datetime.fromtimestamp(messages[-1].created_at / 1000, UTC).date()
    table = Table(title="what the agent still knows")
    table.add_column("fact from the conversation")
    table.add_column("in the context", justify="center")
    for fact in facts(last_day):
        table.add_row(fact.label, "[green]present[/]" if fact.known(text) else "[red]missing[/]")
    return table
