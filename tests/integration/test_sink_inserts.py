"""The sink's inserts land the same rows inline (embedded, small batches) and the Native way (server,
and larger embedded batches): streams/sink/inserts.py.

Rows with the values the om tables take at their edges (UInt64 at and above 2^63, negative Int64,
Nullable, Array, Map, floats to the last bit, unicode of every kind and JSON's own metacharacters)
are inserted once each way into fresh databases of the session's engine and read back: both equal
what was inserted (each row under its own sort key: a ReplacingMergeTree keeps one row per key). On a server DSN both ways are the Native one, which is what a server gets.
"""

from __future__ import annotations

import gc
import weakref

import pytest

from streams.sink import inserts
from streams.sink.inline_values import row_check
from streams.sink.contexts import CONTEXT_COLUMNS
from streams.sink.rows import COLUMNS
from tests.integration.om_pipeline import database_client

pytestmark = pytest.mark.integration

TEXTS = ["", "plain", "naïve café 東京 🧠👩‍👩‍👧 ‮rtl‬ e\u0301", 'quote " back \\ slash / ', "line\nbreak\ttab\r",
         "nul \x00 bell \x07 esc \x1b del \x7f", "\u2028\u2029 \ufeff bom", "}{][,:", "\\u0041 not an escape",
         "FORMAT Native", "INSERT INTO om_events FORMAT JSONEachRow\n[1]"]

ROWS = {
    "om_messages": [
        ["r", "t", f"m{i}", "thread:t", "user", -(1 << 63) + i, f'[{{"type":"text","text":{text!r}}}]', None,
         '{"k": 1}' if i % 2 else None, None if i % 3 else "r", (1 << 63) + i if i % 2 else (1 << 64) - 1 - i, i % 2]
        for i, text in enumerate(TEXTS)],
    "om_records": [
        ["r", f"thread:{i}", 4_294_967_295, "rec", "thread", "t" if i % 2 else None, "initial", text, 7, 1 << 40, 3,
         None if i % 2 else -5, ["c1", text], None, 0, 0, "Europe/Berlin", '{"t": {}}', {"t": text, text: "v"},
         [], 1, 2, 3, (1 << 63) + i]
        for i, text in enumerate(TEXTS)],
    "om_model_calls": [
        ["r", "thread:t", f"c{i}", "observer", "m", "sync", 1, 65_535, 1, 2, 3, 4, cost, 5, 6, i]
        for i, cost in enumerate([None, 0.1 + 0.2, 5e-324, 1.7976931348623157e308, -0.0, 1e-300, 123456.789012345678])],
    "om_contexts": [
        [f"thread:{i}", "r", None if i % 2 else '{"version": 3}', text, None, -1, (1 << 64) - 1, '{"t": []}',
         [text, "t"], [], (1 << 63) + i]
        for i, text in enumerate(TEXTS)],
}


def _columns(table: str) -> tuple[str, ...]:
    return CONTEXT_COLUMNS if table == "om_contexts" else COLUMNS[table]


def _stored(client, table: str) -> list[list]:
    columns = _columns(table)
    rows = client.query(f"SELECT {', '.join(columns)} FROM {table} ORDER BY {', '.join(columns[:3])}").result_rows
    return sorted(([None if v is None else v for v in row] for row in rows), key=repr)


def _expected(table: str) -> list[list]:
    return sorted((list(row) for row in ROWS[table]), key=repr)


@pytest.mark.parametrize("table", sorted(ROWS))
def test_inline_and_native_inserts_store_the_same_rows(clickhouse_dsn: str, table: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    inline, native = database_client(clickhouse_dsn), database_client(clickhouse_dsn)
    types = dict(inline.query("SELECT name, type FROM system.columns WHERE table = {t:String} "
                              "AND database = currentDatabase()", parameters={"t": table}).result_rows)
    check = row_check([types[name] for name in _columns(table)])
    assert check is not None and all(map(check, ROWS[table]))  # these rows do go inline (embedded)
    inserts.insert(inline, table, ROWS[table], _columns(table))
    monkeypatch.setattr(inserts, "INLINE_MAX_BYTES", 0)
    inserts.insert(native, table, ROWS[table], _columns(table))
    assert _stored(inline, table) == _expected(table)
    assert _stored(native, table) == _expected(table)


def test_a_batch_over_the_inline_bound_lands_the_native_way(clickhouse_dsn: str) -> None:
    client = database_client(clickhouse_dsn)
    big = [[f"thread:{i}", "r", None, None, None, 0, 0, "x" * 40_000, [], [], i + 1] for i in range(3)]
    assert inserts.inline_rows(big, lambda row: True, inserts.INLINE_MAX_BYTES) is None
    inserts.insert(client, "om_contexts", big, CONTEXT_COLUMNS)
    assert client.command("SELECT sum(length(windows)) FROM om_contexts") == 120_000


class _Rows(list):
    """A batch that can be referred to weakly."""


def test_a_native_insert_frees_its_rows_without_waiting_for_a_collection(clickhouse_dsn: str) -> None:
    """clickhouse-connect's insert context refers to itself; the batch it holds must not wait for the
    cyclic collector (whose pauses hold the interpreter lock the reader's thread needs)."""
    client = database_client(clickhouse_dsn)
    rows = _Rows([f"thread:{i}", "r", None, None, None, 0, 0, "x" * 40_000, [], [], i + 1] for i in range(3))
    gone = weakref.ref(rows)
    gc.disable()
    try:
        inserts.insert(client, "om_contexts", rows, CONTEXT_COLUMNS)
        del rows
        assert gone() is None, "the insert's context keeps the batch in a reference cycle"
    finally:
        gc.enable()
    assert client.command("SELECT count() FROM om_contexts") == 3


def test_a_value_json_would_store_differently_sends_the_insert_the_native_way(clickhouse_dsn: str) -> None:
    """2^40 for a UInt32: ClickHouse's JSON input would store 0, the Native insert refuses it."""
    client = database_client(clickhouse_dsn)
    row = ["thread:t", "c", "cycle", 1, "active", "obs", 1 << 40, [], 0, "", 0, 0, None, None, 0, 1]
    with pytest.raises(Exception):  # noqa: B017, PT011 - whichever error the Native way raises
        inserts.insert(client, "om_observation_chunks", [row], COLUMNS["om_observation_chunks"])
    assert client.command("SELECT count() FROM om_observation_chunks") == 0


def test_inline_rows_are_one_json_array_a_line_up_to_the_bound() -> None:
    rows = [["a", 1 << 63, None, ["x"]], ["b\n", -1, 0.5, []]]
    every = lambda row: True  # noqa: E731
    assert inserts.inline_rows(rows, every, 1 << 10) == b'["a",9223372036854775808,null,["x"]]\n["b\\n",-1,0.5,[]]'
    assert inserts.inline_rows(rows, every, 40) is None
    assert inserts.inline_rows(rows, lambda row: row[0] == "a", 1 << 10) is None
    assert inserts.inline_rows([["\ud800"]], every, 1 << 10) is None
