"""Services are stopped only through the pid file we wrote, and only if it is still our program."""

import subprocess
import sys
from pathlib import Path

from streams.services import process

MARKER = "om-test-sleeper"


def _spawn(tmp_path: Path) -> int:
    argv = [sys.executable, "-c", "import time, sys; time.sleep(60)", MARKER]
    return process.spawn(argv, cwd=tmp_path, output=tmp_path / "out", pid_file=tmp_path / "svc.pid")


def test_stop_kills_the_recorded_process_and_removes_the_pid_file(tmp_path: Path) -> None:
    pid = _spawn(tmp_path)
    assert process.running_pid(tmp_path / "svc.pid", MARKER) == pid
    assert process.stop(tmp_path / "svc.pid", MARKER, timeout=5) is True
    assert not process.is_running(pid, MARKER)
    assert not (tmp_path / "svc.pid").exists()
    assert process.stop(tmp_path / "svc.pid", MARKER) is False


def test_a_pid_running_another_program_is_never_signalled(tmp_path: Path) -> None:
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (tmp_path / "svc.pid").write_text(f"{other.pid}\n")
        assert process.stop(tmp_path / "svc.pid", MARKER) is False
        assert other.poll() is None
        assert not (tmp_path / "svc.pid").exists()
    finally:
        other.kill()
        other.wait()


def test_a_garbled_pid_file_reads_as_not_running(tmp_path: Path) -> None:
    (tmp_path / "svc.pid").write_text("not a pid")
    assert process.running_pid(tmp_path / "svc.pid", MARKER) is None
