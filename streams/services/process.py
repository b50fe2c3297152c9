"""Background processes tracked by a pid file.

A service is stopped only through the pid recorded when *we* started it, never by looking up
processes by name: another checkout, a test session or a user's own broker may be running the
same program on this machine. Before trusting a recorded pid we check that it still runs the
expected program, because pids are reused after a reboot or a long uptime.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path


def read_pid(pid_file: Path) -> int | None:
    try:
        return int(pid_file.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None


def is_running(pid: int, marker: str) -> bool:
    """True if ``pid`` is alive (not a zombie) and its command line contains ``marker``."""
    _reap(pid)
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return False
    return marker in cmdline and "\nState:\tZ" not in status


def running_pid(pid_file: Path, marker: str) -> int | None:
    """The pid from ``pid_file`` if that process is still ours and alive; clears a stale file."""
    pid = read_pid(pid_file)
    if pid is None:
        return None
    if is_running(pid, marker):
        return pid
    pid_file.unlink(missing_ok=True)
    return None


def spawn(argv: list[str], *, cwd: Path, output: Path, pid_file: Path) -> int:
    """Start ``argv`` detached from our session, so Ctrl-C in the caller's terminal leaves it alone."""
    with output.open("wb") as out:
        proc = subprocess.Popen(
            argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    pid_file.write_text(f"{proc.pid}\n")
    _wait_exec(proc)
    return proc.pid


def stop(pid_file: Path, marker: str, *, timeout: float = 30.0) -> bool:
    """SIGTERM the recorded pid, SIGKILL it after ``timeout``, wait for exit; False if none ran."""
    pid = running_pid(pid_file, marker)
    if pid is None:
        return False
    os.kill(pid, signal.SIGTERM)
    if not _wait_exit(pid, marker, timeout):
        os.kill(pid, signal.SIGKILL)
        _wait_exit(pid, marker, 10.0)
    pid_file.unlink(missing_ok=True)
    return True


def kill(pid_file: Path, marker: str, *, timeout: float = 10.0) -> bool:
    """SIGKILL the recorded pid at once (no shutdown hooks: a crash), wait for exit; False if none ran."""
    pid = running_pid(pid_file, marker)
    if pid is None:
        return False
    os.kill(pid, signal.SIGKILL)
    _wait_exit(pid, marker, timeout)
    pid_file.unlink(missing_ok=True)
    return True


def _wait_exit(pid: int, marker: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not is_running(pid, marker):
            return True
        time.sleep(0.05)
    return not is_running(pid, marker)


def _wait_exec(proc: subprocess.Popen[bytes], timeout: float = 5.0) -> None:
    """Popen may return while the child still shows the parent's (empty) command line; wait it out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if Path(f"/proc/{proc.pid}/cmdline").read_bytes():
                return
        except FileNotFoundError:
            return
        time.sleep(0.01)


def _reap(pid: int) -> None:
    """Collect the exit status if ``pid`` is our own child, so it does not linger as a zombie."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
