"""Opening a replay source from what the user typed: a path, a ``file:`` URL or a PostgreSQL DSN.

The kind is detected (extension, ``postgres://`` scheme, SQLite's file header) or named with
``--format``; a JSONL source is here because it is a few lines.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Literal, get_args

import orjson

from schemas.base import SchemaError
from schemas.messages import ChatMessage
from streams.replay.locomo import LoCoMoSource
from streams.replay.mastra_sources import MastraPostgresSource, MastraSQLiteSource
from streams.replay.source import ReplayInputError, ReplaySource, file_fingerprint

Format = Literal["jsonl", "mastra-sqlite", "mastra-postgres", "locomo"]
FORMATS: tuple[str, ...] = get_args(Format)
SQLITE_HEADER = b"SQLite format 3\x00"


class JsonlSource:
    """One :class:`ChatMessage` per line (snake_case or Mastra's camelCase), replayed in file order."""

    def __init__(self, path: Path) -> None:
        self.path = path.expanduser().resolve()
        self.identity = f"jsonl:{self.path}"

    def fingerprint(self) -> str:
        return file_fingerprint(self.path)

    def count(self) -> int:
        with self.path.open("rb") as lines:
            return sum(1 for line in lines if line.strip())

    def messages(self) -> Iterator[ChatMessage]:
        with self.path.open("rb") as lines:
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    yield ChatMessage.from_obj(orjson.loads(line))
                except (orjson.JSONDecodeError, SchemaError) as error:
                    raise ReplayInputError(f"{self.path}:{number}: {error}") from error


def open_source(spec: str, fmt: Format | None = None, *, import_om: bool = True) -> ReplaySource:
    """The source ``spec`` names; ``fmt`` overrides detection; ``import_om=False`` replays a Mastra
    store's messages only (the pipeline then observes them from scratch)."""
    kind = fmt or detect_format(spec)
    if kind == "mastra-postgres":
        return MastraPostgresSource(spec, import_om=import_om)
    path = Path(spec.removeprefix("file:"))
    if not path.is_file():
        raise ReplayInputError(f"{path} is not a file; give a JSONL/JSON file, a Mastra SQLite file or a "
                               "postgresql:// DSN")
    if kind == "mastra-sqlite":
        return MastraSQLiteSource(path, import_om=import_om)
    if kind == "locomo":
        return LoCoMoSource(path)
    return JsonlSource(path)


def detect_format(spec: str) -> Format:
    if spec.startswith(("postgres://", "postgresql://")):
        return "mastra-postgres"
    path = Path(spec.removeprefix("file:"))
    if path.suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if path.suffix == ".json":
        return "locomo"
    try:
        with path.open("rb") as head:
            if head.read(len(SQLITE_HEADER)) == SQLITE_HEADER:
                return "mastra-sqlite"
    except OSError as error:
        raise ReplayInputError(f"cannot read {path}: {error}") from error
    raise ReplayInputError(f"cannot tell what {spec} is; pass --format ({', '.join(FORMATS)})")
