"""The offline model's answers made in child processes, as a provider makes them outside the worker.

A worker that runs both the processor and the LLM agent (``om run``, role ``all``) answers
``om-deterministic/…`` calls here (``OM_OFFLINE_MODEL_PROCESSES``, default 1; 0 keeps them in the
worker's threads); the first child starts with the worker, importing the model while the worker
imports the rest. The string rules take milliseconds of CPU on a long prompt; in a thread they held
the interpreter lock that the worker's fold, sink and reader wait for (at 1,000 msgs/s, ~28 % of the
one worker's lock time, bench/RESULTS.md section 2). An ``llm`` role has nothing else to run: there
the children would only add the requests' encoding (at 1,000 msgs/s the roles split kept up with
792-836 msgs/s with them, 862-863 without), so it answers in its threads. Rules this file keeps:

* **The same answers**: a child runs :func:`streams.llm.deterministic.offline.answer`, a pure function
  of the request; fault plans are counted in the worker (offline.py), never here.
* **At most ``size`` children**, the first started with the worker, the others when a call finds
  none idle, each answering one call at a time (:mod:`streams.llm.deterministic.answer_child`). A
  thread waiting on a child's pipe holds no lock.
* **A child that ends fails only its call**, as a dropped connection (``ConnectionError``: the
  client's retry policy retries it); the next call starts a new child. A child never outlives its
  worker (its stdin ends with the worker).
"""

from __future__ import annotations

import contextlib
import queue
import subprocess
import sys
import threading
from typing import Any

import orjson

from streams.llm.deterministic.frames import read_frame, write_frame

CHILD = [sys.executable, "-m", "streams.llm.deterministic.answer_child"]


class OfflineModelError(RuntimeError):
    """The offline model raised while answering (the type of its exception, not the prompt)."""


class _Child:
    def __init__(self) -> None:
        self.process = subprocess.Popen(CHILD, stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True)

    def ask(self, request: bytes) -> dict[str, str]:
        """The child's reply to one request: ``{"text": …}`` or ``{"error": …}``."""
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            write_frame(self.process.stdin, request)
            body = read_frame(self.process.stdout)
        except (OSError, ValueError) as error:  # a broken pipe (the child ended), or one closed meanwhile
            raise ConnectionError(f"the offline model's process ended ({error.__class__.__name__})") from None
        if body is None:
            raise ConnectionError(f"the offline model's process ended (exit code {self.process.poll()})")
        return orjson.loads(body)

    def close(self) -> None:
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):  # a dead child's stdin refuses the unwritten rest
                    pipe.close()  # its stdin ends: it exits
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class AnswerPool:
    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("an answer pool needs at least one process")
        self._busy = threading.BoundedSemaphore(size)
        self._idle: queue.SimpleQueue[_Child] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._children: set[_Child] = set()
        self._closed = False

    def warm(self) -> None:
        """Starts one child now (it imports the model while the worker starts), so the first call
        does not wait for it."""
        with self._busy:
            self._idle.put(self._take())

    def answer(self, role: str, messages: list[dict[str, Any]], response_format: dict[str, Any] | None) -> str:
        """Blocking (call it in a thread): the offline model's answer, made in a child."""
        request = orjson.dumps([role, messages, response_format])
        with self._busy:
            child = self._take()
            try:
                reply = child.ask(request)
            except BaseException:  # mid-request: what is left in its pipes is unknown
                self._drop(child)
                raise
            self._idle.put(child)  # a whole reply read: ready for the next
        if "error" in reply:
            raise OfflineModelError(f"the offline model failed: {reply['error']}")
        return reply["text"]

    def close(self) -> None:
        """Ends every child (the worker's exit does too: their stdin ends)."""
        with self._lock:
            self._closed = True
            children, self._children = list(self._children), set()
        for child in children:
            child.close()

    @property
    def pids(self) -> list[int]:
        with self._lock:
            return [child.process.pid for child in self._children]

    def _take(self) -> _Child:
        if self._closed:
            raise ConnectionError("the offline model's processes are closed")
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            if self._closed:
                raise ConnectionError("the offline model's processes are closed")
            child = _Child()
            self._children.add(child)
            return child

    def _drop(self, child: _Child) -> None:
        with self._lock:
            self._children.discard(child)
        child.close()
