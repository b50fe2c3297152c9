"""A worker (``om run``) as a child process: the demo and the integration tests drive one this way."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from streams.services.errors import ServiceError


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_http(url: str, proc: subprocess.Popen, log: Path, timeout: float = 90.0) -> None:
    """Poll ``url`` until it answers 2xx; fail early, pointing at the log, if the process died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServiceError(f"the worker exited with {proc.returncode}; its log is {log}")
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise ServiceError(f"{url} did not answer within {timeout:.0f} s; the worker's log is {log}")


@dataclass
class WorkerHandle:
    env: dict[str, str]
    log: Path
    role: str = "all"
    proc: subprocess.Popen | None = None

    def start(self, ready_url: str) -> None:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "streams.cli", "run", "--role", self.role],
                env={**os.environ, **self.env}, stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        wait_http(ready_url, self.proc, self.log)

    def kill(self) -> None:
        """kill -9: no shutdown hooks; the broker aborts the open transactions."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)

    def stop(self, timeout: float = 30.0) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()
