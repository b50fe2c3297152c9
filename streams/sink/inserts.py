"""Inserts that name their columns' types, so clickhouse-connect does not ask for them each time.

Given only column names, clickhouse-connect describes the table before every insert: one more query
per insert (~1 ms of CPU embedded, a round trip on a server), and the sink inserts into several
tables per batch. The types come from ``system.columns`` once per (database, table, columns) and
are kept for the process: the schema changes only through migrations (streams/migrate.py), which
run before the sink starts.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from clickhouse_connect.driver.client import Client

_TYPES_SQL = ("SELECT name, type FROM system.columns WHERE table = {table:String} "
              "AND database = if({database:String} = '', currentDatabase(), {database:String})")
_known: dict[tuple[str, str, tuple[str, ...]], list[str]] = {}
_lock = threading.Lock()


def insert(client: Client, table: str, rows: Sequence[Sequence[Any]], columns: Sequence[str]) -> None:
    """``client.insert`` of ``rows`` (in ``columns`` order) with the columns' types named."""
    names = tuple(columns)
    database = client.database or ""  # unset: the session's current database
    key = (database, table, names)
    types = _known.get(key)
    if types is None:
        found = dict(client.query(_TYPES_SQL, parameters={"database": database, "table": table}).result_rows)
        types = [found[name] for name in names]
        with _lock:
            _known[key] = types
    client.insert(table, rows, column_names=list(names), column_type_names=types)
