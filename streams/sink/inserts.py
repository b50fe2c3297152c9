"""The sink's inserts, each the cheapest way its kind of ClickHouse takes rows.

* **Embedded (chDB), small batches: the rows inline**, as ``JSONCompactEachRow`` lines after the
  ``INSERT`` statement, in one engine call. clickhouse-connect's own chDB insert writes the rows
  to a temp file and has the engine read it back (``INSERT … FROM INFILE``): a file created and
  deleted per insert besides the part's own, and creating files is most of what an insert costs
  the embedded engine (perf: ext4's inode allocation, slowed by every file recently deleted);
  with the Python around it, ~0.6–0.9 ms more of the calling thread's CPU per small insert.
  Batches over ``INLINE_MAX_BYTES`` go the Native way: clickhouse-connect scans a command's whole
  text for a trailing ``FORMAT`` clause (~6 ns a byte, 18 ms for 3 MB), which outgrows the temp
  file's cost at ~100 kB.
* **Server (http), and the other embedded batches: clickhouse-connect's Native insert.**

Rules this file keeps:

* **The same rows either way.** A batch goes inline only when every value has the Python type its
  column expects and fits it (:mod:`streams.sink.inline_values`), and orjson can write it (not a
  ``str`` with a lone surrogate); otherwise the Native way, which stays the definition of what is
  stored or refused (a refused record is dead-lettered by the sink). Inline, UInt64 at and above
  2^63 (observed message versions), negative Int64, Nullable, Array, Map, floats to the last bit
  (``precise_float_parsing``) and any unicode land as the Native way stores them;
  ``tests/integration/test_sink_inserts.py`` drives both ways.
* **Column types named.** Both ways know each column's type, from ``system.columns`` once per
  (database, table, columns), kept for the process: the schema changes only through migrations
  (streams/migrate.py), which run before the sink starts. Given only column names,
  clickhouse-connect would describe the table before every insert (one more query each).
* **A batch is freed when its insert returns.** clickhouse-connect's insert context refers to itself
  (a bound method of its own), so the batch it holds lived until the next cyclic collection: in bench
  8 at 32 agents, ~13,000 row lists at a time, and nearly all the collector found. The context is
  emptied once the insert is done.
* Data never becomes SQL: the rows follow the statement's ``FORMAT`` clause, where the engine
  reads them as data to the end of the call; the statement names only our own tables and columns.
  The engine keeps no query log (chDB has no ``system.query_log``); an error of a refused inline
  insert may quote the row, as ClickHouse's parse errors do: the sink logs only the error's type,
  and a dead letter carries the error as it carries the record itself.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import orjson
from clickhouse_connect.driver._backend.chdb_backend import ChdbBackend
from clickhouse_connect.driver.client import Client

from streams.sink.inline_values import row_check

_TYPES_SQL = ("SELECT name, type FROM system.columns WHERE table = {table:String} "
              "AND database = if({database:String} = '', currentDatabase(), {database:String})")
INLINE_MAX_BYTES = 64 << 10
RowCheck = Callable[[Sequence[Any]], bool] | None
_known: dict[tuple[str, str, tuple[str, ...]], tuple[list[str], RowCheck]] = {}
_lock = threading.Lock()


def insert(client: Client, table: str, rows: Sequence[Sequence[Any]], columns: Sequence[str]) -> None:
    """Insert ``rows`` (values in ``columns`` order) into ``table``."""
    types, check = _column_types(client, table, tuple(columns))
    if check is not None and embedded(client) and (data := inline_rows(rows, check, INLINE_MAX_BYTES)) is not None:
        client.command(f"INSERT INTO {table} ({', '.join(columns)}) SETTINGS precise_float_parsing = 1 "
                       "FORMAT JSONCompactEachRow", data=data)
        return
    context = client.create_insert_context(table, list(columns), column_type_names=types, data=rows)
    try:
        client.insert(context=context)
    finally:
        vars(context).clear()  # it refers to itself (a bound method of its own): its rows would wait for a collection


def inline_rows(rows: Sequence[Sequence[Any]], check: Callable[[Sequence[Any]], bool], max_bytes: int) -> bytes | None:
    """``rows`` as ``JSONCompactEachRow`` (one JSON array per row, a line each); None when a row
    fails ``check`` or orjson, or once they pass ``max_bytes``."""
    lines, size = [], 0
    for row in rows:
        if not check(row):
            return None
        try:
            line = orjson.dumps(row)
        except TypeError:  # a str orjson cannot write: the Native way decides
            return None
        size += len(line) + 1
        if size > max_bytes:
            return None
        lines.append(line)
    return b"\n".join(lines)


def embedded(client: Client) -> bool:
    """Whether ``client`` runs on the in-process chDB engine (a wrapper that passes attributes
    through counts as its client)."""
    return isinstance(getattr(client, "_backend", None), ChdbBackend)


def _column_types(client: Client, table: str, names: tuple[str, ...]) -> tuple[list[str], RowCheck]:
    database = client.database or ""  # unset: the session's current database
    key = (database, table, names)
    known = _known.get(key)
    if known is None:
        found = dict(client.query(_TYPES_SQL, parameters={"database": database, "table": table}).result_rows)
        types = [found[name] for name in names]
        known = (types, row_check(types))
        with _lock:
            _known[key] = known
    return known
