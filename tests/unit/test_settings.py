"""Settings come from OM_* variables, and the embedded ClickHouse DSN follows the data dir."""

from pathlib import Path

import pytest

from streams.settings import PROJECT_ROOT, Settings


def test_defaults_describe_the_embedded_local_setup(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OM_DATA_DIR", "OM_KAFKA_BOOTSTRAP", "OM_CLICKHOUSE_DSN", "OM_TEST_BACKEND"):
        monkeypatch.delenv(name, raising=False)
    settings = Settings()
    assert settings.data_dir == PROJECT_ROOT / ".om"
    assert settings.kafka_bootstrap == "127.0.0.1:19092"
    assert settings.kafka_port == 19092
    assert settings.clickhouse_dsn == f"chdb://{PROJECT_ROOT / '.om' / 'clickhouse'}"
    assert settings.test_backend == "auto"


def test_moving_the_data_dir_moves_the_embedded_clickhouse(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("OM_CLICKHOUSE_DSN", raising=False)
    monkeypatch.setenv("OM_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("OM_KAFKA_BOOTSTRAP", "127.0.0.1:29092,127.0.0.1:29094")
    settings = Settings()
    assert settings.clickhouse_dsn == f"chdb://{tmp_path.resolve() / 'clickhouse'}"
    assert settings.kafka_port == 29092


def test_an_explicit_dsn_wins_and_a_bad_backend_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OM_CLICKHOUSE_DSN", "http://u:p@db:8123/om")
    assert Settings().clickhouse_dsn == "http://u:p@db:8123/om"
    monkeypatch.setenv("OM_TEST_BACKEND", "podman")
    with pytest.raises(ValueError, match="test_backend"):
        Settings()


def test_hooks_and_redaction_settings_are_json_and_unknown_hook_slots_are_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OM_HOOKS", '{"after_reflection": ["pkg.mod:fn"]}')
    monkeypatch.setenv("OM_REDACT", "true")
    monkeypatch.setenv("OM_REDACT_PII", '["email"]')
    settings = Settings()
    assert settings.hooks == {"after_reflection": ["pkg.mod:fn"]} and settings.redact
    assert settings.redact_pii == ["email"] and settings.redact_patterns == {}
    monkeypatch.setenv("OM_HOOKS", '{"before_reflect": ["pkg.mod:fn"]}')
    with pytest.raises(ValueError, match="before_reflection"):
        Settings()
