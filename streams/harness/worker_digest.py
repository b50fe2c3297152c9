"""What a fault test prints about each worker when a key's pipeline went quiet, read from the
workers' JSON logs: alive or not, the partitions it was last assigned (per topic), how many times it
joined the group, when it last logged anything, and its warnings and errors counted by kind.

For reading a failure from CI beside the partition dump (streams/harness/partition_dump.py): the
dump says which record nobody processed, this says which worker held it and what it was doing.
Message text never reaches these logs; ids are reduced to their kinds.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from streams.harness.worker_log import log_entries

ASSIGNED = "Setting newly assigned partitions"
_TP = re.compile(r"topic='(?:[^']*\.)?([a-z-]+?)(?:\.v\d+)?', partition=(\d+)")
_NOISE = re.compile(r"[0-9a-f]{8,}|\d+")
SHOWN_TOPICS = ("messages", "results", "jobs")


def worker_digest(logs: Iterable[tuple[str, Path, bool]], *, now: float | None = None) -> str:
    """``logs``: (name, log file, alive) per worker."""
    now = time.time() if now is None else now
    return "\n".join(_one(name, path, alive, now) for name, path, alive in logs)


def _one(name: str, path: Path, alive: bool, now: float) -> str:
    joined, last_ts, assigned = 0, None, {}
    problems: Counter[str] = Counter()
    try:
        entries = log_entries(path)
    except OSError as error:
        return f"{name}: no log ({error.strerror})"
    for entry in entries:
        event, last_ts = str(entry.get("event", "")), entry.get("ts", last_ts)
        if event.startswith(ASSIGNED):
            joined += 1
            assigned = {}
            for topic, partition in _TP.findall(event):
                assigned.setdefault(topic, []).append(int(partition))
        if entry.get("level") in ("WARNING", "ERROR", "CRITICAL"):
            problems[f"{entry['level'][0]} {_NOISE.sub('N', event[:70])}"] += 1
    quiet = f"{now - last_ts:.0f} s ago" if isinstance(last_ts, (int, float)) else "never"
    shown = ", ".join(f"{t} {sorted(assigned[t])}" for t in SHOWN_TOPICS if t in assigned) or "nothing"
    head = f"{name}: {'alive' if alive else 'gone'}, {joined} assignment(s), last logged {quiet}; last assigned {shown}"
    return "\n".join([head, *[f"    {count:>4} × {kind}" for kind, count in problems.most_common(8)]])
