"""Mastra storage databases as replay sources: a LibSQL/SQLite file, or PostgreSQL by DSN.

Both read the same tables with the same queries (:mod:`.mastra_format`, :mod:`.mastra_om`); only the
driver differs. SQLite needs nothing beyond the standard library; PostgreSQL needs the optional
``postgres`` extra (psycopg 3), imported only when such a source is opened.

With OM records in the store (and ``import_om``, the default), the threads those records cover are
imported — record and messages together, as ``record-import`` events (:mod:`.mastra_om`) — and
:meth:`messages` yields only the other threads' messages. Without OM records (or with
``import_om=False``) every message is replayed as before and the pipeline observes from scratch.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from schemas.base import SchemaError
from schemas.messages import ChatMessage
from schemas.record_import import RecordImport
from streams.replay.mastra_format import COUNT_SQL, MastraRow, message_from_row, messages_sql
from streams.replay.mastra_om import (
    OM_TABLE,
    ImportTally,
    absent_columns,
    build_import,
    note_absent_columns,
    om_columns,
    thread_from_row,
)
from streams.replay.source import ReplayInputError, file_fingerprint

THREADS_SQL = 'SELECT id, "resourceId", title, metadata FROM mastra_threads ORDER BY id'
RESOURCES_SQL = 'SELECT id, "workingMemory" FROM mastra_resources'
# OM columns Mastra's PostgreSQL store reads from their "…Z" (timestamptz) mirror; its lastBufferedAtTimeZ
# is only ever the column default (the write time), so lastBufferedAtTime is read as it is
Z_MIRRORED = ("lastObservedAt", "createdAt", "updatedAt")


def _convert(rows: Iterator[tuple[Any, ...]], where: str) -> Iterator[ChatMessage]:
    for row in rows:
        try:
            yield message_from_row(MastraRow(*row))
        except SchemaError as error:
            raise ReplayInputError(f"{where}: message {row[0]!r}: {error}; fix or delete that row") from error


class _MastraStore:
    """What both drivers share: the OM import plan and the split of messages it implies."""

    identity: str
    import_om: bool = True

    def _rows(self, sql: str) -> list[dict[str, Any]]: ...

    def _columns(self, table: str) -> list[str]: ...

    def _all_messages(self) -> Iterator[ChatMessage]: ...

    def count(self) -> int:
        imported = self._imported_threads()
        if not imported:
            return int(next(iter(self._rows(COUNT_SQL)[0].values())))
        return sum(1 for m in self._all_messages() if m.thread_id not in imported)

    def messages(self) -> Iterator[ChatMessage]:
        imported = self._imported_threads()
        return (m for m in self._all_messages() if m.thread_id not in imported)

    def imports(self, tally: ImportTally) -> Iterator[RecordImport]:
        """Every OM record's import parts, key by key in lookup-key order (deterministic)."""
        heads = self._om_rows()
        if not heads:
            return
        note_absent_columns(absent_columns(self._columns(OM_TABLE)), len(heads), tally)
        threads = {t.id: t for t in map(thread_from_row, self._rows(THREADS_SQL))}
        resource_wm = self._resource_working_memory()
        by_thread: dict[str, list[ChatMessage]] = defaultdict(list)
        for message in self._all_messages():
            by_thread[message.thread_id].append(message)
        for key, rows in sorted(heads.items()):
            mine = _threads_of(rows[0], threads)
            messages = sorted((m for t in mine for m in by_thread.get(t.id, ())), key=lambda m: (m.created_at, m.id))
            yield from build_import(rows, mine, messages, resource_wm.get(rows[0]["resourceId"]), self.identity, tally)

    def om_scopes(self) -> set[str]:
        return {rows[0]["scope"] for rows in self._om_rows().values()}

    def _imported_threads(self) -> set[str]:
        heads = self._om_rows()
        if not heads:
            return set()
        threads = {t.id: t for t in map(thread_from_row, self._rows(THREADS_SQL))}
        return {t.id for rows in heads.values() for t in _threads_of(rows[0], threads)}

    def _om_rows(self) -> dict[str, list[dict[str, Any]]]:
        if not self.import_om or OM_TABLE not in self._tables():
            return {}
        present = self._columns(OM_TABLE)
        selected = ", ".join(self._select(column, present) for column in om_columns(present))
        by_key: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in self._rows(f'SELECT {selected} FROM {OM_TABLE} ORDER BY "lookupKey", "generationCount"'):
            by_key[row["lookupKey"]].append(row)
        return dict(by_key)

    def _resource_working_memory(self) -> dict[str, str]:
        if "mastra_resources" not in self._tables() or "workingMemory" not in self._columns("mastra_resources"):
            return {}
        return {r["id"]: r["workingMemory"] for r in self._rows(RESOURCES_SQL) if isinstance(r["workingMemory"], str)}

    def _tables(self) -> set[str]: ...

    def _select(self, column: str, present: list[str]) -> str:
        return f'"{column}"'


def _threads_of(head: dict[str, Any], threads: dict[str, Any]) -> list[Any]:
    if head["scope"] == "thread":
        thread = threads.get(head["threadId"])
        return [thread] if thread is not None else []
    return [t for t in threads.values() if t.resource_id == head["resourceId"]]


class MastraSQLiteSource(_MastraStore):
    """A Mastra LibSQL/SQLite file (``file:./mastra.db`` URLs are accepted too), opened read-only."""

    def __init__(self, path: Path, *, import_om: bool = True) -> None:
        self.path = path.expanduser().resolve()
        if not self.path.is_file():
            raise ReplayInputError(f"{self.path} does not exist")
        self.identity = f"mastra-sqlite:{self.path}"
        self.import_om = import_om

    def fingerprint(self) -> str:
        return file_fingerprint(self.path)

    def _all_messages(self) -> Iterator[ChatMessage]:
        with self._connect() as db:
            sql = messages_sql(self._columns("mastra_messages"), str(self.path))
            yield from _convert(db.execute(sql), str(self.path))

    def _rows(self, sql: str) -> list[dict[str, Any]]:
        with self._connect() as db:
            db.row_factory = sqlite3.Row
            return [dict(row) for row in db.execute(sql)]

    def _columns(self, table: str) -> list[str]:
        with self._connect() as db:
            return [row[1] for row in db.execute(f"PRAGMA table_info({table})")]

    def _tables(self) -> set[str]:
        with self._connect() as db:
            return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def _connect(self) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
            db.execute("SELECT 1 FROM mastra_messages LIMIT 0")
            db.execute("SELECT 1 FROM mastra_threads LIMIT 0")
        except sqlite3.DatabaseError as error:
            raise ReplayInputError(f"{self.path} is not a Mastra storage database ({error}); "
                                   "expected the tables mastra_threads and mastra_messages") from error
        return db


class MastraPostgresSource(_MastraStore):
    """Mastra's PostgreSQL store (``postgresql://user:pass@host/db``); ``schema`` = its schemaName."""

    def __init__(self, dsn: str, schema: str = "public", *, import_om: bool = True) -> None:
        self.dsn, self.schema = dsn, schema
        self.identity = f"mastra-postgres:{_without_password(dsn)}/{schema}"
        self.import_om = import_om

    def fingerprint(self) -> str:
        """Message count and newest timestamp, and the OM rows' newest update: a store that moved on
        is replayed afresh."""
        with self._connect() as db:
            total, _, newest = db.execute(COUNT_SQL).fetchone()
        om = ""
        if self.import_om and OM_TABLE in self._tables():
            om = str(self._rows(f'SELECT max("updatedAt") AS u FROM {OM_TABLE}')[0]["u"])
        return f"{total}:{newest}:{om}"

    def _all_messages(self) -> Iterator[ChatMessage]:
        sql = messages_sql(self._columns("mastra_messages"), self.identity)
        with self._connect() as db, db.cursor(name="om_replay") as cursor:  # server-side: streams rows
            cursor.execute(sql)
            yield from _convert(iter(cursor), self.identity)

    def _select(self, column: str, present: list[str]) -> str:
        """The timezone-aware mirror first where Mastra reads it (its PostgreSQL ``parseOMRow``)."""
        if column in Z_MIRRORED and f"{column}Z" in present:
            return f'COALESCE("{column}Z", "{column}") AS "{column}"'
        return f'"{column}"'

    def _rows(self, sql: str) -> list[dict[str, Any]]:
        from psycopg.rows import dict_row

        with self._connect() as db, db.cursor(row_factory=dict_row) as cursor:
            cursor.execute(sql)
            return list(cursor)

    def _columns(self, table: str) -> list[str]:
        with self._connect() as db:
            rows = db.execute("SELECT column_name FROM information_schema.columns WHERE table_schema = %s "
                              "AND table_name = %s ORDER BY ordinal_position", (self.schema, table))
            return [row[0] for row in rows]

    def _tables(self) -> set[str]:
        with self._connect() as db:
            rows = db.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                              (self.schema,))
            return {row[0] for row in rows}

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
