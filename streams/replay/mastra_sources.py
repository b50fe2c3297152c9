"""Mastra storage databases as replay sources: a LibSQL/SQLite file, or PostgreSQL by DSN.

Both read the same two tables with the same query (:mod:`.mastra_format`); only the driver
differs. SQLite needs nothing beyond the standard library; PostgreSQL needs the optional
``postgres`` extra (psycopg 3), imported only when such a source is opened.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from schemas.base import SchemaError
from schemas.messages import ChatMessage
from streams.replay.mastra_format import COUNT_SQL, MESSAGES_SQL, MastraRow, message_from_row
from streams.replay.source import ReplayInputError, file_fingerprint


def _convert(rows: Iterator[tuple[Any, ...]], where: str) -> Iterator[ChatMessage]:
    for row in rows:
        try:
            yield message_from_row(MastraRow(*row))
        except SchemaError as error:
            raise ReplayInputError(f"{where}: message {row[0]!r}: {error}; fix or delete that row") from error


class MastraSQLiteSource:
    """A Mastra LibSQL/SQLite file (``file:./mastra.db`` URLs are accepted too), opened read-only."""

    def __init__(self, path: Path) -> None:
        self.path = path.expanduser().resolve()
        if not self.path.is_file():
            raise ReplayInputError(f"{self.path} does not exist")
        self.identity = f"mastra-sqlite:{self.path}"

    def fingerprint(self) -> str:
        return file_fingerprint(self.path)

    def count(self) -> int:
        with self._connect() as db:
            return int(db.execute(COUNT_SQL).fetchone()[0])

    def messages(self) -> Iterator[ChatMessage]:
        with self._connect() as db:
            yield from _convert(db.execute(MESSAGES_SQL), str(self.path))

    def _connect(self) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
            db.execute("SELECT 1 FROM mastra_messages LIMIT 0")
            db.execute("SELECT 1 FROM mastra_threads LIMIT 0")
        except sqlite3.DatabaseError as error:
            raise ReplayInputError(f"{self.path} is not a Mastra storage database ({error}); "
                                   "expected the tables mastra_threads and mastra_messages") from error
        return db


class MastraPostgresSource:
    """Mastra's PostgreSQL store (``postgresql://user:pass@host/db``); ``schema`` = its schemaName."""

    def __init__(self, dsn: str, schema: str = "public") -> None:
        self.dsn, self.schema = dsn, schema
        self.identity = f"mastra-postgres:{_without_password(dsn)}/{schema}"

    def fingerprint(self) -> str:
        """Message count and newest timestamp: a store that gained messages is replayed afresh."""
        with self._connect() as db:
            total, _, newest = db.execute(COUNT_SQL).fetchone()
        return f"{total}:{newest}"

    def count(self) -> int:
        with self._connect() as db:
            return int(db.execute(COUNT_SQL).fetchone()[0])

    def messages(self) -> Iterator[ChatMessage]:
        with self._connect() as db, db.cursor(name="om_replay") as cursor:  # server-side: streams rows
            cursor.execute(MESSAGES_SQL)
            yield from _convert(iter(cursor), self.identity)

    def _connect(self) -> Any:
        try:
            import psycopg
        except ImportError as error:
            raise ReplayInputError("reading PostgreSQL needs psycopg: pip install 'om-stream[postgres]'") from error
        try:
            db = psycopg.connect(self.dsn, options=f"-c search_path={self.schema}")
        except psycopg.Error as error:
            raise ReplayInputError(f"cannot connect to {_without_password(self.dsn)}: {error}") from error
        return db


def _without_password(dsn: str) -> str:
    parts = urlsplit(dsn)
    if parts.password is None:
        return dsn
    netloc = parts.netloc.replace(f":{parts.password}@", "@", 1)
    return urlunsplit(parts._replace(netloc=netloc))
