"""``om simulate``: the core alone over a conversation file, printing the timeline as JSONL.

No broker, no database. The Observer/Reflector answers come from the offline deterministic model
(through the same job runner the workers use), from a real model (``--model provider/name``), or from
a *cassette* — a JSONL file of recorded answers replayed in order — so a timeline is exactly
repeatable. ``--record`` writes the answers of a run to a cassette for later replays.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any, TextIO

import orjson
import typer

from processors.config import OMConfig
from processors.machine import counter_for
from processors.model_port import ModelClient
from processors.simulate import Responder, simulate
from schemas.base import SchemaError, decode
from schemas.control import decode_control
from schemas.jobs import ObserveJob, ObserveResult, ReflectJob, ReflectResult
from schemas.messages import ChatMessage
from streams.llm.cassette import CassetteExhausted, CassetteModel, is_model_cassette
from streams.om_config import load_config
from streams.settings import get_settings


def read_events(path: Path) -> list[Any]:
    """JSONL of chat messages (and optional control events, told apart by ``kind``)."""
    events = []
    for number, line in enumerate(path.read_bytes().splitlines(), 1):
        if not line.strip():
            continue
        try:
            kind = orjson.loads(line).get("kind", "message")
            events.append(decode(ChatMessage, line) if kind == "message" else decode_control(line))
        except (SchemaError, orjson.JSONDecodeError, AttributeError) as exc:
            raise typer.BadParameter(f"{path}:{number}: {exc}") from exc
    return events


@contextmanager
def model_responder(config: OMConfig, llm: ModelClient | None = None,
                    loop: asyncio.AbstractEventLoop | None = None) -> Iterator[Responder]:
    """Answers through the workers' job runner on a private event loop, closed afterwards (with the
    configured model, or ``llm``, e.g. a :class:`CassetteModel`). A caller making model calls of its
    own passes its ``loop`` (litellm's background logging must stay on one loop); it stays open."""
    from streams.llm.client import LiteLLMClient
    from streams.llm.jobs import run_job
    from streams.settings import get_settings

    owned = loop is None
    loop = loop or asyncio.new_event_loop()
    llm, counter = llm or LiteLLMClient.from_settings(get_settings(), config), counter_for(config)

    def respond(job: ObserveJob | ReflectJob) -> ObserveResult | ReflectResult:
        result = loop.run_until_complete(run_job(job, config, llm, counter))
        return result.model_copy(update=_event_times(job))  # wall-clock times would break repeatability

    try:
        yield respond
    finally:
        if owned:
            close_loop(loop)


def close_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Close a private loop as ``asyncio.run`` closes its own: tasks still pending are cancelled and
    awaited first. litellm starts its logging worker (``LoggingWorker._worker_loop``) on the loop of
    its first call and leaves it waiting there; closed under it, it was destroyed pending and its
    clean-up raised "Event loop is closed" at garbage collection."""
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()


def _event_times(job: ObserveJob | ReflectJob) -> dict[str, int]:
    return {"started_at": job.issued_at, "completed_at": job.issued_at}


def cassette_responder(path: Path) -> Responder:
    answers = [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    position = iter(range(len(answers)))

    def respond(job: ObserveJob | ReflectJob) -> ObserveResult | ReflectResult:
        index = next(position, None)
        if index is None:
            raise typer.BadParameter(f"cassette {path} has only {len(answers)} answers; record a longer one")
        answer = answers[index]
        if answer.get("kind") != job.kind:
            raise typer.BadParameter(f"cassette answer {index + 1} is for a {answer.get('kind')} job, "
                                     f"the core asked for {job.kind}; the cassette belongs to another run")
        common = {"cycle_id": job.cycle_id, "key": job.key, "generation": job.generation, "mode": job.mode,
                  **_event_times(job)}
        fields = {k: v for k, v in answer.items() if k != "kind"}
        result_type = ObserveResult if job.kind == "observe" else ReflectResult
        return result_type(**common, **fields)

    return respond


def recording(responder: Responder, out: TextIO) -> Responder:
    keep = ("ok", "error", "observations", "current_task", "suggested_response", "thread_title",
            "extracted_values")

    def respond(job: ObserveJob | ReflectJob) -> ObserveResult | ReflectResult:
        result = responder(job)
        data = {k: v for k, v in result.to_json_dict().items() if k in keep}
        out.write(orjson.dumps({"kind": job.kind, **data}).decode() + "\n")
        return result

    return respond


def simulate_command(
    conversation: Path = typer.Argument(..., exists=True, help="JSONL of chat messages (and control events)"),
    config: Path | None = typer.Option(None, "--config", exists=True, help="JSON OM config (Mastra options)"),
    model: str | None = typer.Option(None, "--model", help="provider/model; default: the offline deterministic one"),
    cassette: Path | None = typer.Option(None, "--cassette", exists=True, help="replay recorded answers"),
    record: Path | None = typer.Option(None, "--record", help="write the answers of this run to a cassette"),
    latency_ms: int = typer.Option(0, "--latency-ms", help="model latency, in event time"),
) -> None:
    """Run the decision core over a conversation and print the timeline as JSONL."""
    settings = get_settings().model_copy(update={"config_file": config, **({"model": model} if model else {})})
    om_config = load_config(settings)
    answering = _cassette(cassette, om_config) if cassette else model_responder(om_config)
    with answering as responder, open(record, "w") if record else nullcontext() as recorded:
        answer = recording(responder, recorded) if recorded else responder
        try:
            for entry in simulate(read_events(conversation), om_config, answer, latency_ms):
                sys.stdout.write(entry.to_json().decode() + "\n")
        except CassetteExhausted as exc:
            raise typer.BadParameter(f"cassette {cassette}: {exc}") from exc


def _cassette(path: Path, config: OMConfig) -> Any:
    """A job-level cassette (recorded results), or a model-level one (recorded model outputs per role,
    run through the real job code)."""
    lines = [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    if lines and is_model_cassette(lines[0]):
        return model_responder(config, CassetteModel(lines))
    return nullcontext(cassette_responder(path))
