"""streams/harness/worker_digest.py: each worker's last assignment, silence and warnings, from its log."""

from __future__ import annotations

from pathlib import Path

import orjson

from streams.harness.worker_digest import worker_digest
from streams.harness.worker_log import log_entries


def _assigned(ts: float, partitions: list[int]) -> dict:
    tps = ", ".join(f"TopicPartition(topic='p.{t}.v1', partition={p})" for t in ("messages", "jobs") for p in partitions)
    return {"ts": ts, "level": "INFO", "logger": "aiokafka", "event": f"Setting newly assigned partitions {{{tps}}}"}


def test_the_last_assignment_silence_and_warnings_are_shown(tmp_path: Path) -> None:
    log = tmp_path / "worker-0.log"
    entries = [_assigned(100.0, [0, 1]), _assigned(110.0, [7, 1]),
               {"ts": 111.0, "level": "WARNING", "logger": "faust", "event": "Heartbeat failed for group w1a2b3c4d5-worker"},
               {"ts": 112.0, "level": "WARNING", "logger": "faust", "event": "Heartbeat failed for group w9f8e7d6c5-worker"}]
    log.write_bytes(b"\n".join(orjson.dumps(e) for e in entries) + b"\n\x1b[?25h OK ^\n")
    digest = worker_digest([("worker 0", log, True), ("worker 1", tmp_path / "missing.log", False)], now=142.0)
    assert digest.splitlines() == [
        "worker 0: alive, 2 assignment(s), last logged 30 s ago; last assigned messages [1, 7], jobs [1, 7]",
        "       2 × W Heartbeat failed for group wN-worker",
        "worker 1: no log (No such file or directory)",
    ]


def test_log_entries_keeps_json_objects_in_order_and_skips_the_rest(tmp_path: Path) -> None:
    log = tmp_path / "w.log"
    log.write_bytes(b'{"event": "a"}\nTraceback (most recent call last):\n[1, 2]\n{"event": "b"}\n{"event": "c", "ts"')
    assert [e["event"] for e in log_entries(log)] == ["a", "b"]
