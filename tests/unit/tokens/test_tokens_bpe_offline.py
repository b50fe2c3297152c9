"""BPE encodings load from local files only, and equal tiktoken's own encodings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from processors.tokens import bpe_offline
from processors.tokens.bpe_offline import TOKENIZER_DIR_ENV, TokenizerFilesMissing, load_encoding

SAMPLES = ["Hello, world!", "def f(x):\n    return x ** 2\n", "日本語のテキスト", "emoji 😀👍🏽", "<|endoftext|> is text here"]
ROOT = Path(__file__).resolve().parents[3]


def run_python(code: str, env_extra: dict[str, str] | None = None) -> str:
    import os

    env = {**os.environ, **(env_extra or {})}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_loads_without_network_and_without_importing_litellm() -> None:
    out = run_python(
        "import socket, sys\n"
        "def refuse(*a, **k): raise RuntimeError('network used')\n"
        "socket.socket.connect = refuse; socket.create_connection = refuse; socket.getaddrinfo = refuse\n"
        "from processors.tokens import get_counter\n"
        "print(get_counter('o200k_base').count_string('hello world'), get_counter('cl100k_base').count_string('hi'))\n"
        "print('litellm' in sys.modules)\n"
    )
    assert out.split() == ["2", "1", "False"]


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_equals_tiktoken_official_encoding(name: str) -> None:
    """tiktoken's own get_encoding, pointed at the same files through its cache variable."""
    folder = bpe_offline._candidate_dirs()[-1]
    official = json.loads(run_python(
        f"import json, tiktoken; e = tiktoken.get_encoding({name!r}); "
        f"print(json.dumps([e.encode_ordinary(s) for s in {SAMPLES!r}]))",
        {"TIKTOKEN_CACHE_DIR": str(folder)},
    ))
    ours = load_encoding(name)
    assert [ours.encode_ordinary(text) for text in SAMPLES] == official


def test_missing_files_say_what_to_do(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(bpe_offline, "_loaded", {})
    monkeypatch.setenv(TOKENIZER_DIR_ENV, str(tmp_path))
    monkeypatch.setattr(bpe_offline.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(TokenizerFilesMissing, match=TOKENIZER_DIR_ENV) as caught:
        load_encoding("o200k_base")
    assert str(tmp_path) in str(caught.value) and "tokenx" in str(caught.value)


def test_a_wrong_file_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(bpe_offline, "_loaded", {})
    monkeypatch.setenv(TOKENIZER_DIR_ENV, str(tmp_path))
    (tmp_path / "cl100k_base.tiktoken").write_bytes(b"aGk= 0\n")
    with pytest.raises(TokenizerFilesMissing, match="sha256"):
        load_encoding("cl100k_base")


def test_override_folder_is_used(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    source = bpe_offline._candidate_dirs()[-1] / "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
    (tmp_path / "cl100k_base.tiktoken").write_bytes(source.read_bytes())
    monkeypatch.setattr(bpe_offline, "_loaded", {})
    monkeypatch.setenv(TOKENIZER_DIR_ENV, str(tmp_path))
    monkeypatch.setattr(bpe_offline.importlib.util, "find_spec", lambda name: None)
    assert len(load_encoding("cl100k_base").encode_ordinary("hello world")) == 2


def test_unknown_encoding() -> None:
    with pytest.raises(ValueError, match="unknown BPE encoding"):
        load_encoding("p50k_base")


def test_core_imports_no_io_libraries() -> None:
    banned = ("faust", "aiokafka", "clickhouse_connect", "litellm", "chdb", "aiohttp", "httpx", "requests")
    for path in (ROOT / "processors" / "tokens").glob("*.py"):
        lines = [line.strip() for line in path.read_text().splitlines()]
        imports = [line for line in lines if line.startswith(("import ", "from "))]
        for line in imports:
            module = line.split()[1].split(".")[0]
            assert module not in banned, f"{path.name}: {line}"
