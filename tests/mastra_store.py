"""A Mastra LibSQL/SQLite storage file, built the way Mastra's libsql store lays it out.

Columns and types follow Mastra's ``TABLE_SCHEMAS`` (``packages/core/src/storage/constants.ts``)
as the libsql store creates them: text, ``timestamp`` as ISO-8601 text, ``jsonb`` as JSON text,
camelCase columns quoted. Message ``content`` is format 2 (``{"format": 2, "parts": [...]}``).
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

THREADS_DDL = """CREATE TABLE IF NOT EXISTS mastra_threads (
    id TEXT NOT NULL PRIMARY KEY, "resourceId" TEXT NOT NULL, title TEXT NOT NULL, metadata TEXT,
    "createdAt" TEXT NOT NULL, "updatedAt" TEXT NOT NULL)"""
MESSAGES_DDL = """CREATE TABLE IF NOT EXISTS mastra_messages (
    id TEXT NOT NULL PRIMARY KEY, thread_id TEXT NOT NULL, content TEXT NOT NULL, role TEXT NOT NULL,
    type TEXT NOT NULL, "createdAt" TEXT NOT NULL, "resourceId" TEXT)"""


def iso(ms: int) -> str:
    """Mastra writes ``Date.toISOString()``: millisecond precision, ``Z``."""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def text_content(text: str, **extra: Any) -> str:
    return orjson.dumps({"format": 2, "parts": [{"type": "text", "text": text}], **extra}).decode()


def build_store(path: Path, threads: dict[str, str], messages: list[dict[str, Any]]) -> Path:
    """``threads``: id → resourceId; ``messages``: dicts with id, thread_id, role, created_at (ms),
    content (format-2 JSON text) and optionally resource_id (None = the column left NULL)."""
    db = sqlite3.connect(path)
    with db:
        db.execute(THREADS_DDL)
        db.execute(MESSAGES_DDL)
        for thread_id, resource_id in threads.items():
            first = min((m["created_at"] for m in messages if m["thread_id"] == thread_id), default=0)
            db.execute('INSERT INTO mastra_threads VALUES (?, ?, ?, ?, ?, ?)',
                       (thread_id, resource_id, f"Thread {thread_id}", '{"source": "test"}', iso(first), iso(first)))
        for m in messages:
            db.execute('INSERT INTO mastra_messages VALUES (?, ?, ?, ?, ?, ?, ?)',
                       (m["id"], m["thread_id"], m["content"], m["role"], "v2", iso(m["created_at"]),
                        m.get("resource_id", threads[m["thread_id"]])))
    db.close()
    return path


def sample_store(path: Path, threads: int = 2, per_thread: int = 6, start: int = 1_714_000_000_000,
                 prefix: str = "") -> Path:
    """Interleaved user/assistant turns a minute apart, inserted newest first (order must come from
    ``createdAt``, not from insertion)."""
    thread_map = {f"{prefix}mt{t}": f"{prefix}user{t}" for t in range(threads)}
    rows = [{"id": f"{prefix}mt{t}-m{i}", "thread_id": f"{prefix}mt{t}",
             "role": "user" if i % 2 == 0 else "assistant", "created_at": start + i * 60_000 + t,
             "content": text_content(f"thread {t} turn {i}: notes about the garden and the trip")}
            for i in range(per_thread) for t in range(threads)]
    return build_store(path, thread_map, list(reversed(rows)))
