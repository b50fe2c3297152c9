"""The offline model's process: answers framed requests on stdin, one at a time, until stdin ends.

Started by :mod:`streams.llm.deterministic.answer_pool` (``python -m streams.llm.deterministic.answer_child``).
Frames (frames.py) hold JSON: a request is ``[role, messages, response_format]``, an answer
``{"text": …}`` or ``{"error": …}``. Rules:

* **Dies with its worker**: the worker holds the only write end of stdin, so its exit — clean or a
  kill -9 — ends stdin here, and this process exits. A terminal's Ctrl-C is the worker's to handle.
* **Says nothing of what it reads**: an answer that fails returns the exception's type only.
"""

from __future__ import annotations

import os
import signal
import sys

import orjson

from streams.llm.deterministic.frames import read_frame, write_frame
from streams.llm.deterministic.offline import answer


def answer_frame(body: bytes) -> bytes:
    try:
        role, messages, response_format = orjson.loads(body)
        return orjson.dumps({"text": answer(role, messages, response_format)})
    except Exception as error:  # the worker raises it as a failed call, without the prompt
        return orjson.dumps({"error": type(error).__name__})


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    stdin, stdout = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a stray print goes to stderr, never into a frame
    sys.stdout = sys.stderr
    while (body := read_frame(stdin)) is not None:
        write_frame(stdout, answer_frame(body))


if __name__ == "__main__":
    main()
