"""A throwaway PostgreSQL server for tests: ``initdb`` into a temp dir, ``postgres`` on a free loopback port.

Rules it keeps: the server listens on 127.0.0.1 only (no Unix socket), trusts its own superuser
``postgres`` and nobody else can reach it; it runs with fsync off (test data, thrown away); as root it
runs as the unprivileged ``postgres`` user (PostgreSQL refuses to run as root), else as the caller;
it is stopped (fast shutdown, then killed after a deadline) and its directory removed on exit. The
binaries come from Debian's ``postgresql`` packages (``/usr/lib/postgresql/<major>/bin``, newest
first) or the PATH; ``make install`` installs them where they are missing.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from streams.services.worker_process import free_port

DEBIAN_ROOT = Path("/usr/lib/postgresql")
START_DEADLINE_S = 30.0
STOP_DEADLINE_S = 10.0
START_ATTEMPTS = 3  # a free port can be taken between choosing it and binding it


class PostgresMissing(RuntimeError):
    """No PostgreSQL server binaries on this machine."""


def pg_tool(name: str) -> str:
    """The newest Debian-packaged ``name`` (initdb, postgres, psql …), else the one on the PATH."""
    if DEBIAN_ROOT.is_dir():
        majors = sorted((p for p in DEBIAN_ROOT.iterdir() if p.name.isdigit()), key=lambda p: int(p.name),
                        reverse=True)
        for major in majors:
            if (major / "bin" / name).is_file():
                return str(major / "bin" / name)
    found = shutil.which(name)
    if found is None:
        raise PostgresMissing(f"PostgreSQL's {name} was not found (looked in {DEBIAN_ROOT}/*/bin and the PATH); "
                              "`make install` installs Debian's postgresql packages")
    return found


@dataclass(frozen=True)
class PostgresServer:
    port: int

    def dsn(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def psql(self, *args: str, database: str = "postgres") -> None:
        """Runs ``psql`` (stopping at the first error) against ``database``."""
        subprocess.run([pg_tool("psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", self.dsn(database), *args],
                       check=True, capture_output=True, timeout=60)

    def database_from_dump(self, name: str, dump: Path) -> str:
        """A new database ``name`` loaded from a plain-SQL ``dump``; its DSN."""
        self.psql("-c", f'CREATE DATABASE "{name}"')
        self.psql("-f", str(dump), database=name)
        return self.dsn(name)


def _run_as() -> pwd.struct_passwd | None:
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam("postgres")
    except KeyError:
        return pwd.getpwnam("nobody")


@contextlib.contextmanager
def postgres_server() -> Iterator[PostgresServer]:
    user = _run_as()
    home = Path(tempfile.mkdtemp(prefix="om-pg-"))
    as_user = {"user": user.pw_uid, "group": user.pw_gid} if user else {}
    try:
        if user:
            os.chown(home, user.pw_uid, user.pw_gid)
        data = home / "data"
        subprocess.run([pg_tool("initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                        "--locale=C", "--no-sync"], check=True, capture_output=True, timeout=120, **as_user)
        process, port = _start(data, home / "server.log", as_user)
        try:
            yield PostgresServer(port)
        finally:
            _stop(process)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _start(data: Path, log: Path, as_user: dict[str, int]) -> tuple[subprocess.Popen[bytes], int]:
    for _ in range(START_ATTEMPTS):
        port = free_port()
        with log.open("ab") as out:
            process = subprocess.Popen(
                [pg_tool("postgres"), "-D", str(data), "-p", str(port), "-c", "listen_addresses=127.0.0.1",
                 "-c", "unix_socket_directories=", "-c", "fsync=off", "-c", "synchronous_commit=off",
                 "-c", "full_page_writes=off", "-c", "timezone=UTC"],
                stdout=out, stderr=subprocess.STDOUT, **as_user)
        if _ready(process, port):
            return process, port
        _stop(process)
    raise RuntimeError(f"PostgreSQL did not start in {START_ATTEMPTS} attempts; its log: {log.read_text()[-2000:]}")


def _ready(process: subprocess.Popen[bytes], port: int) -> bool:
    """Waits (bounded) until the server accepts connections; False if it exited first."""
    deadline = time.monotonic() + START_DEADLINE_S
    probe = [pg_tool("pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(port), "-t", "1"]
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        if subprocess.run(probe, check=False, capture_output=True).returncode == 0:
            return True
        time.sleep(0.05)  # polling interval of a bounded wait on the server's readiness
    return False


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)  # PostgreSQL's fast shutdown
        try:
            process.wait(STOP_DEADLINE_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
