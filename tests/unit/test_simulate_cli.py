"""``om simulate``: a repeatable timeline from a conversation file, with a model or a cassette."""

from __future__ import annotations

from pathlib import Path

import orjson
from typer.testing import CliRunner

from streams.cli import app
from tests.integration.pipeline import conversation

CONFIG = {"observation": {"messageTokens": 1000}, "reflection": {"observationTokens": 800}}


def run(*args: str) -> list[dict]:
    result = CliRunner().invoke(app, ["simulate", *args])
    assert result.exit_code == 0, result.output
    return [orjson.loads(line) for line in result.stdout.splitlines()]


def test_timeline_is_repeatable_and_a_cassette_reproduces_it(tmp_path: Path) -> None:
    talk, config, cassette = tmp_path / "talk.jsonl", tmp_path / "om.json", tmp_path / "answers.jsonl"
    talk.write_bytes(b"\n".join(m.to_bytes() for m in conversation(1, 40)))
    config.write_bytes(orjson.dumps(CONFIG))
    live = run(str(talk), "--config", str(config), "--record", str(cassette))
    assert live == run(str(talk), "--config", str(config))
    assert live == run(str(talk), "--config", str(config), "--cassette", str(cassette))
    messages = [e for e in live if e["input"].startswith("message:")]
    assert len(messages) == 40 and all("pending_tokens" in e and "generation" in e for e in messages)
    kinds = {ev["type"] for e in live for ev in e["events"]}
    assert {"buffering-start", "buffering-end", "activation"} <= kinds


def test_a_short_cassette_says_what_to_do(tmp_path: Path) -> None:
    talk, config, cassette = tmp_path / "talk.jsonl", tmp_path / "om.json", tmp_path / "answers.jsonl"
    talk.write_bytes(b"\n".join(m.to_bytes() for m in conversation(1, 40)))
    config.write_bytes(orjson.dumps(CONFIG))
    cassette.write_text("")
    result = CliRunner().invoke(app, ["simulate", str(talk), "--config", str(config), "--cassette", str(cassette)])
    assert result.exit_code != 0 and "record a longer one" in result.output


def test_a_bad_line_names_its_place(tmp_path: Path) -> None:
    talk = tmp_path / "talk.jsonl"
    talk.write_text('{"kind": "message", "id": "x"}\n')
    result = CliRunner().invoke(app, ["simulate", str(talk)])
    assert result.exit_code != 0 and "talk.jsonl:1" in result.output


def test_the_private_loop_closes_with_no_task_left_pending() -> None:
    """A model client that leaves a task waiting on the responder's loop (litellm's logging worker
    does, on its first call) finds it cancelled and finished once the responder is done, not
    destroyed pending with a closed loop under it ("Event loop is closed" at garbage collection)."""
    import asyncio

    from processors.config import OMConfig
    from processors.model_port import ModelCall, ModelReply
    from schemas.jobs import ObserveJob
    from schemas.messages import ChatMessage, TextPart
    from streams.simulate_cli import model_responder

    class Lingering:
        """Answers at once and, like litellm, leaves a background task waiting on the caller's loop."""

        def __init__(self) -> None:
            self.background: list[asyncio.Task] = []

        async def complete(self, call: ModelCall) -> ModelReply:
            self.background.append(asyncio.get_running_loop().create_task(asyncio.Event().wait()))
            return ModelReply(text="<observations>\n* 🔴 (09:00) User said hi.\n</observations>", model=call.model)

    llm = Lingering()
    job = ObserveJob(cycle_id="c", key="thread:t", thread_id="t", resource_id="r", record_id="rec", generation=0,
                     issued_at=0, mode="sync", tokens_to_observe=10,
                     messages=[ChatMessage(id="m", thread_id="t", resource_id="r", role="user",
                                           created_at=1_733_000_000_000, parts=[TextPart(text="hi")])])
    with model_responder(OMConfig(), llm) as answer:
        assert answer(job).ok
    assert llm.background and all(task.cancelled() for task in llm.background)
