"""Open ClickHouse from a DSN: the embedded chDB engine or a ClickHouse server, same client API.

Only the DSN differs between the laptop default and production; everything downstream gets a
clickhouse-connect ``Client`` either way.

* ``chdb:///abs/dir`` (or ``chdb:relative/dir``) runs the ClickHouse engine inside this process
  on that data directory, created if missing. An optional ``?database=name`` is created on first
  use, as the server image does for ``CLICKHOUSE_DB``.
* ``http://user:pass@host:8123/db`` or ``https://…`` talks to a server.

Why the embedded client is cached: chDB hosts exactly one engine per process and locks its data
directory against every other process (``<dir>/status``). A second client on the same directory
would work but buys nothing, and a client on a *different* directory fails while one is open. So
:func:`connect` hands out one shared client per process for a given DSN (its calls are
serialised by a per-client lock, so threads may share it; DSNs that differ only in options such
as ``?database=`` get a client each, on the same engine) and :func:`close_all` releases the
engine, e.g. at shutdown or between tests. Do not ``close()`` a shared client yourself. A named
``handle`` is another shared client on the same engine and directory: calls on different handles
run side by side (the embedded sink starts a batch while it inserts the one before, and its reader
reads meanwhile), calls on one handle one at a time.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse, urlunparse

import clickhouse_connect
from clickhouse_connect.driver.binding import quote_identifier
from clickhouse_connect.driver.client import Client
from clickhouse_connect.driver.exceptions import ClickHouseError

log = logging.getLogger(__name__)

MEMORY = ":memory:"
_MEMORY_NAMES = frozenset({"memory", MEMORY})

_lock = threading.Lock()
_embedded: dict[tuple[str, str, str], Client] = {}  # (data dir, DSN options, handle) -> shared client


class ClickHouseConnectError(RuntimeError):
    """ClickHouse could not be opened; the message says why and what to do about it."""


class DataDirectoryLocked(ClickHouseConnectError):
    """Another process runs the embedded engine on this data directory."""

    def __init__(self, data_dir: str, pid: str | None) -> None:
        holder = f"process {pid}" if pid else "another process"
        super().__init__(
            f"ClickHouse data directory {data_dir} is in use by {holder} (lock file "
            f"{data_dir}/status). The embedded chDB engine allows one process per data directory. "
            "Stop that process (e.g. `om services down`), point OM_CLICKHOUSE_DSN at another "
            "directory, or use a ClickHouse server (http://…) so that several processes can share it."
        )
        self.data_dir = data_dir
        self.pid = pid


def connect(dsn: str | None = None, *, handle: str = "") -> Client:
    """Return a client for ``dsn`` (default: ``OM_CLICKHOUSE_DSN`` through the settings).

    The embedded client is shared within the process per ``handle`` (see the module docstring); a
    server DSN returns a new HTTP client, which is cheap and pools its own connections.
    """
    if dsn is None:
        from streams.settings import get_settings

        dsn = get_settings().clickhouse_dsn
    scheme = urlparse(dsn).scheme
    if scheme == "chdb":
        return _connect_embedded(dsn, handle)
    if scheme in ("http", "https"):
        return _connect_server(dsn)
    raise ClickHouseConnectError(
        f"Unsupported ClickHouse DSN {redact(dsn)!r}: use chdb:///<data dir> for the embedded "
        "engine or http(s)://user:password@host:port/database for a server."
    )


def close_all() -> None:
    """Close the shared embedded client, releasing its data directory for other processes."""
    with _lock:
        for (data_dir, _, _), client in _embedded.items():
            client.close()
            log.info("clickhouse.embedded.closed", extra={"data_dir": data_dir})
        _embedded.clear()


def redact(dsn: str) -> str:
    """The DSN with its password replaced, for messages and logs."""
    parts = urlparse(dsn)
    if not parts.password:
        return dsn
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunparse(parts._replace(netloc=netloc))


def _connect_server(dsn: str) -> Client:
    try:
        client = clickhouse_connect.get_client(dsn=dsn)
    except ClickHouseError as error:
        raise ClickHouseConnectError(f"Cannot open ClickHouse server {redact(dsn)}: {error}") from error
    log.info("clickhouse.server.connected", extra={"dsn": redact(dsn), "version": client.server_version})
    return client


def _connect_embedded(dsn: str, handle: str) -> Client:
    data_dir, query = _embedded_location(dsn)
    key = (data_dir, urlencode(sorted(query.items())), handle)
    with _lock:
        client = _embedded.get(key)
        if client is not None:
            return client
        other_dirs = {open_dir for open_dir, _, _ in _embedded} - {data_dir}
        if other_dirs:
            raise ClickHouseConnectError(
                f"This process already runs the embedded ClickHouse engine on {other_dirs.pop()}; "
                f"chDB hosts one data directory per process, so {data_dir} cannot be opened too. Use "
                "the same DSN everywhere in the process, or call streams.clickhouse.close_all() first."
            )
        client = _open_embedded(data_dir, dict(query))
        _embedded[key] = client
    log.info("clickhouse.embedded.opened", extra={"data_dir": data_dir, "database": client.database})
    return client


def _embedded_location(dsn: str) -> tuple[str, dict[str, str]]:
    """Split a chdb DSN into an absolute data directory (or ``:memory:``) and its options."""
    parts = urlparse(dsn)
    query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    if parts.netloc in _MEMORY_NAMES:
        return MEMORY, query
    if parts.netloc or not parts.path:
        raise ClickHouseConnectError(
            f"Cannot read a data directory from {dsn!r}: write chdb:///absolute/dir "
            "(three slashes) or chdb:relative/dir."
        )
    return os.path.realpath(parts.path), query


def _open_embedded(data_dir: str, query: dict[str, str]) -> Client:
    database = query.pop("database", None)
    if data_dir != MEMORY:
        Path(data_dir).mkdir(parents=True, exist_ok=True)
    engine_dsn = f"chdb://{data_dir}" + (f"?{urlencode(query)}" if query else "")
    try:
        client = clickhouse_connect.get_client(dsn=engine_dsn)
    except ClickHouseError as error:
        raise _explain_open_failure(data_dir, error) from error
    if database:
        client.command(f"CREATE DATABASE IF NOT EXISTS {quote_identifier(database)}")
        client.database = database
    return client


def _explain_open_failure(data_dir: str, error: Exception) -> Exception:
    """Turn chDB's opaque "Error initializing EmbeddedServer" into the reason behind it.

    The engine prints the real cause ("Cannot lock file …/status") to stderr only, so look at
    the lock ourselves: ClickHouse holds an exclusive ``flock`` on ``status`` while running and
    writes its PID into it.
    """
    status = Path(data_dir) / "status"
    if data_dir == MEMORY or not status.exists():
        return ClickHouseConnectError(f"Cannot open the embedded ClickHouse engine on {data_dir}: {error}")
    with status.open("rb") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return DataDirectoryLocked(data_dir, _status_pid(status))
        fcntl.flock(handle, fcntl.LOCK_UN)
    return ClickHouseConnectError(f"Cannot open the embedded ClickHouse engine on {data_dir}: {error}")


def _status_pid(status: Path) -> str | None:
    for line in status.read_text(errors="replace").splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "PID":
            return value.strip()
    return None
