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
