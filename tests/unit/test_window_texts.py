"""streams/sink/window_texts.py: a window brought forward by appending is written out without a pass
over it, and its column is the one ``orjson.dumps`` writes, byte for byte, over random windows."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

from streams.sink import context_appends
from streams.sink.context_appends import _append, _message_fields, _move_head, appended_rows
from streams.sink.rows import OBSERVED_VERSION
from streams.sink.stored_versions import Loader, StoredVersions
from streams.sink.window_parses import WindowParses
from streams.sink.window_texts import Windows

THREADS = ("t", "", 'q"uote', "back\\slash", "ctl\x01\n\t", "ünïcødé", "日本語", "🙂", "\u2028line", "a/b")
KEY = ("r", "thread:t")


def _text(rng: random.Random) -> str:
    return "".join(rng.choice('ab \\"\n\x07é日🙂\u2028/') for _ in range(rng.randint(0, 12)))


def _parts(rng: random.Random) -> list[dict[str, Any]]:
    return [{"type": "text", "text": _text(rng)},
            {"type": "tool", "args": {_text(rng): [rng.randint(-5, 5), rng.random(), None, True, {"n": [_text(rng)]}]}}
            ][:rng.randint(1, 2)]


def _row(rng: random.Random, thread: str, mid: str, created: int, version: int, role: str = "user") -> list[Any]:
    """An ``om_messages`` row (streams.sink.rows.MESSAGE_COLUMNS)."""
    metadata = orjson.dumps({"k": _text(rng)}).decode() if rng.random() < 0.3 else None
    return ["r", thread, mid, KEY[1], role, created, orjson.dumps(_parts(rng)).decode(), rng.choice([None, "m"]),
            metadata, "r", version, 0]


def _append_as_before(row: list[Any], windows: dict[str, list[dict[str, Any]]], messages, hidden) -> bool:
    """streams/sink/context_appends.py's ``_append`` before window texts (3c26e0f): the definition."""
    threads, speaking = set(row[8]), set(row[9])
    gone = {(m[1], m[2]) for m in hidden}
    for m in hidden:
        threads.add(m[1])
        if m[4] != "system":
            speaking.add(m[1])
        windows[m[1]] = [w for w in windows.get(m[1], []) if (m[1], w["id"]) not in gone]
    new_ids = {(m[1], m[2]) for m in messages}
    by_thread: dict[str, list] = {}
    for m in messages:
        threads.add(m[1])
        if m[4] != "system":
            by_thread.setdefault(m[1], []).append(m)
    for thread, rows in by_thread.items():
        speaking.add(thread)
        kept = [w for w in windows.get(thread, []) if (thread, w["id"]) not in new_ids]
        times = {w["created_at"] for w in kept}
        if any(m[5] in times for m in rows):
            return False
        added = [_message_fields(m) for m in sorted(rows, key=lambda r: (r[5], r[10]))]
        windows[thread] = sorted(kept + added, key=lambda w: w["created_at"])
    row[8], row[9] = sorted(threads), sorted(speaking)
    return True


def _batch(rng: random.Random, windows: dict[str, list[dict[str, Any]]], threads: list[str], serial: list[int]):
    """Random new messages (mostly later than their window, some sharing a time, some earlier, some
    re-delivered, some system) and hidden ones (observed copies, some in a window)."""
    messages, used = [], set()
    for _ in range(rng.randint(0, 3)):
        thread = rng.choice(threads)
        window = windows.get(thread, [])
        last = window[-1]["created_at"] if window else 0
        kind = rng.random()
        if window and kind < 0.08:  # re-delivered: the same id, at its time or another
            old = rng.choice(window)
            mid, created = old["id"], old["created_at"] if rng.random() < 0.7 else last + rng.randint(1, 3)
        elif window and kind < 0.14:
            mid, created = f"n{serial[0]}", rng.choice(window)["created_at"]  # a shared time (the last's too)
        elif window and kind < 0.2:
            mid, created = f"n{serial[0]}", rng.randint(0, last)  # earlier than the last one
        else:
            mid, created = f"n{serial[0]}", last + rng.randint(1, 3)  # later (two of the batch may share one)
        serial[0] += 1
        if (thread, mid) not in used:
            used.add((thread, mid))
            role = "system" if rng.random() < 0.1 else "user"
            messages.append(_row(rng, thread, mid, created, rng.randint(0, 9), role))
    hidden = []
    if rng.random() < 0.15:
        thread = rng.choice(threads)
        mid = rng.choice(windows[thread])["id"] if windows.get(thread) else f"n{serial[0]}"
        if (thread, mid) not in used:
            hidden.append(_row(rng, thread, mid, 0, OBSERVED_VERSION))
    return messages, hidden


def _initial(rng: random.Random, threads: list[str]) -> dict[str, list[dict[str, Any]]]:
    windows = {}
    for thread in rng.sample(threads, rng.randint(0, len(threads))):
        times = sorted(rng.sample(range(50), rng.randint(0, 6)))
        windows[thread] = [_message_fields(_row(rng, thread, f"i{i}", t, 0)) for i, t in enumerate(times)]
    return {t: w for t, w in sorted(windows.items()) if w}


@pytest.mark.parametrize("seed", range(12))
def test_the_column_brought_forward_is_the_one_orjson_writes(seed: int, monkeypatch) -> None:
    """A chain of bring-forwards (a new message later than its window takes the append), each from
    the newest column or now and then an older one (a branch: its id sets grew since) or an equal
    text in another string (not remembered): ``_append`` and ``_move_head`` give what they gave
    before window texts, and the column equals ``orjson.dumps`` of the windows."""
    rng = random.Random(seed)
    parses, threads, serial = WindowParses(), rng.sample(THREADS, rng.randint(1, 4)), [0]
    appends = {True: 0, False: 0}
    append = Windows.append

    def counted(self, thread, added, ids):
        appended = append(self, thread, added, ids)
        appends[appended] += 1
        return appended

    monkeypatch.setattr(Windows, "append", counted)
    columns, refused = [orjson.dumps(_initial(rng, threads)).decode()], 0
    for step in range(300):
        choice = rng.random()
        column = columns[-1] if choice < 0.8 else rng.choice(columns) if choice < 0.95 else "".join(list(columns[-1]))
        before, windows = orjson.loads(column), parses.parsed(column)
        messages, hidden = _batch(rng, before, threads, serial)
        row_before = [KEY[1], "r", None, None, None, 0, 0, column, sorted(before), sorted(before), 0]
        row = list(row_before)
        brought = _append_as_before(row_before, before, messages, hidden)
        assert _append(row, windows, messages, hidden) == brought, f"seed {seed}, step {step}"
        if not brought:
            refused += 1
            continue
        if rng.random() < 0.3:  # a head move: observations at or below the new version take messages out
            ids = [m["id"] for w in before.values() for m in w]
            observed = {(KEY[1], i): rng.randint(0, 10) for i in rng.sample(ids, min(len(ids), rng.randint(0, 2)))}
            head = SimpleNamespace(after=(0, 5), before=(0, 4), column=None)
            _move_head(row, windows, KEY, head, observed, [])
            before = {t: [m for m in w if observed.get((KEY[1], m["id"]), 6) > 5] for t, w in before.items()}
        assert row == row_before
        written = windows.column()
        expected = orjson.dumps({t: w for t, w in sorted(before.items()) if w}).decode()
        assert written == expected, f"seed {seed}, step {step}"
        parses.record(written, windows)
        columns.append(written)
    assert appends[True] >= 50 and appends[False] >= 20 and refused >= 5, (appends, refused)


class _NoDoubts:
    """A client whose stored versions' load finds nothing: every message new, nothing observed or deleted."""

    def query(self, *_: Any, **__: Any) -> SimpleNamespace:
        return SimpleNamespace(result_rows=[])


def _no_doubts() -> Loader:
    return StoredVersions().loader(_NoDoubts(), {}, 0)  # type: ignore[arg-type]


def test_a_message_later_than_its_window_is_appended_without_writing_the_window_out_again(monkeypatch) -> None:
    rng = random.Random(0)
    rows = [_row(rng, "t", f"m{i}", i, i) for i in range(302)]
    window = [_message_fields(r) for r in rows]
    row = [KEY[1], "r", None, None, None, 0, 0, orjson.dumps({"t": window[:300]}).decode(), ["t"], ["t"], 0]
    (row,), full = appended_rows([KEY], {"om_messages": [rows[300]]}, lambda _: [row], _no_doubts())
    assert not full  # not remembered: parsed, and written out whole
    written, dumps = [], orjson.dumps

    def counted(value, *args):
        written.append(dumps(value, *args))
        return written[-1]

    monkeypatch.setattr(orjson, "dumps", counted)
    hits = context_appends.PARSES.hits
    (brought,), full = appended_rows([KEY], {"om_messages": [rows[301]]}, lambda _: [row], _no_doubts())
    assert not full and context_appends.PARSES.hits == hits + 1
    assert brought[7] == dumps({"t": window}).decode()
    assert sum(map(len, written)) < len(brought[7]) / 100, "the window was written out again"
