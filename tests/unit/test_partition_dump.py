"""streams/harness/partition_dump.py: a record's kind and ids, never its text."""

from __future__ import annotations

import orjson

from streams.harness.partition_dump import _summary


def test_a_state_shows_its_window_ids_and_cycles_in_flight() -> None:
    state = {"kind": "key-state", "version": 7, "window": [{"id": f"m{i}", "parts": [{"text": "secret"}]} for i in range(5)],
             "in_flight": [{"cycle_id": "buffer-obs-1"}]}
    line = _summary(orjson.dumps(state))
    assert line == "state v7 window 5 …['m2', 'm3', 'm4'] in flight ['buffer-obs-1']"
    assert "secret" not in line


def test_events_jobs_and_messages_show_their_ids_only() -> None:
    assert _summary(orjson.dumps({"type": "buffering-start", "cycle_id": "c1", "key": "thread:t"})) == "buffering-start c1"
    assert _summary(orjson.dumps({"id": "t0-m1", "parts": [{"type": "text", "text": "secret"}]})) == "t0-m1"
    assert _summary(None) == "(tombstone)" and _summary(b"\x00\x01") == "(2 bytes)"
