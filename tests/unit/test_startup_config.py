"""Issue 18 item 11: bad configuration stops the start with one readable line, never runs on defaults.

Each case sets the environment a worker would start with and expects ``configured()`` to end the
start with a single line naming what is wrong — and, for tokens, never the token itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from streams.settings import get_settings
from streams.startup import configured


@pytest.fixture(autouse=True)
def fresh_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in ("OM_CONFIG_FILE", "OM_MODEL", "OM_READER_TOKENS", "OM_PARTITIONS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OM_DATA_DIR", str(tmp_path))
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def _config_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "om.json"
    path.write_text(text)
    return str(path)


def _refusal() -> str:
    with pytest.raises(SystemExit) as stopped:
        configured()
    line = str(stopped.value.code)
    assert "\n" not in line and line.startswith("om: bad configuration: ")
    return line


@pytest.mark.parametrize(("text", "says"), [
    ("[]", "must hold a JSON object"),
    ("true", "not a JSON bool"),
    ("{not json", "not valid JSON"),
    ('{"shareTokenBudget": true}', "async buffering is on by default"),
    ('{"observation": {"messageTokens": "many"}}', "observation.messageTokens"),
])
def test_a_bad_config_file_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, text: str, says: str) -> None:
    monkeypatch.setenv("OM_CONFIG_FILE", _config_file(tmp_path, text))
    assert says in _refusal()


def test_a_missing_config_file_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OM_CONFIG_FILE", str(tmp_path / "absent.json"))
    assert "cannot read it" in _refusal()


@pytest.mark.parametrize("model", ["nonsense", "foo/bar"])
def test_an_unknown_model_string_is_refused(monkeypatch: pytest.MonkeyPatch, model: str) -> None:
    monkeypatch.setenv("OM_MODEL", model)
    assert f"the observer model '{model}' names no known provider" in _refusal()


def test_an_unknown_model_in_the_file_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OM_CONFIG_FILE", _config_file(tmp_path, '{"reflection": {"model": "acme/brain"}}'))
    assert "'acme/brain' names no known provider" in _refusal()


@pytest.mark.parametrize("tokens", ['{"sekrit-token": "r1"}', '{"sekrit-token": [1', '["sekrit-token"]',
                                    '{"": ["r1"]}'])
def test_malformed_reader_tokens_are_refused_without_printing_a_token(monkeypatch: pytest.MonkeyPatch,
                                                                      tokens: str) -> None:
    monkeypatch.setenv("OM_READER_TOKENS", tokens)
    line = _refusal()
    assert "reader_tokens" in line.lower() and "sekrit" not in line


def test_a_bad_setting_names_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OM_PARTITIONS", "0")
    assert "OM_PARTITIONS: " in _refusal()


def test_a_good_configuration_starts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OM_CONFIG_FILE", _config_file(tmp_path, '{"observation": {"messageTokens": 1500}}'))
    monkeypatch.setenv("OM_MODEL", "om-deterministic/observer?latency_ms=5")
    settings, config = configured()
    assert config.observation.message_tokens == 1500 and settings.model.startswith("om-deterministic/")
