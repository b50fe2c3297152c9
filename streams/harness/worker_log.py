"""A worker's JSON log, read back as entries: what tests, benchmarks and fault digests look for in it.

Lines that are not JSON objects (a traceback printed before logging was set up, a partial last
line while the worker is still writing) are skipped, never an error: the log is evidence, read
while the process may still be running.
"""

from __future__ import annotations

from pathlib import Path

import orjson


def log_entries(log: Path) -> list[dict]:
    """Every JSON object line of ``log``, in order."""
    entries = []
    for raw in log.read_bytes().splitlines():
        if not raw.startswith(b"{"):
            continue
        try:
            entry = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(entry, dict):
            entries.append(entry)
    return entries


def log_events(log: Path, event: str) -> list[dict]:
    """The entries of ``log`` whose event is ``event``, in order."""
    return [e for e in log_entries(log) if e.get("event") == event]
