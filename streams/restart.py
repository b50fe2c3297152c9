"""Restarting the worker in place: the one recovery for a task that can no longer be trusted.

Kafka Streams' answer to a failed task is to drop it and rebuild from the last commit; here the
whole process ``exec``s itself (same pid, same arguments): state is rebuilt from the committed
changelog, inputs are re-read from the committed offsets, and whatever the failed transaction held
is aborted by the new producers' fencing. Used when commits stall (streams/stall_guard.py), when a
produce inside a transaction is not confirmed (streams/app.py), and when the embedded sink's task
dies (streams/embedded_storage.py) — a dead task must never sit idle in its consumer group.

The log line names the cause, never record contents.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

log = logging.getLogger(__name__)
ONE_SHOT_FAILPOINTS = ("OM_STALL_COMMITS",)  # fault tests: dropped on the restart they provoke


def restart_in_place(event: str, **details: Any) -> None:
    log.critical(event, extra={"action": "restarting in place from the last commit "
                                         "(nothing acknowledged-but-uncommitted is lost)", **details})
    for handler in logging.getLogger().handlers:
        handler.flush()
    for name in ONE_SHOT_FAILPOINTS:
        os.environ.pop(name, None)
    from streams.llm.deterministic import offline  # loaded already in a worker that has children

    offline.answer_in_processes(0)  # its children end and are waited for: the same pid could not reap them
    os.execve(sys.executable, sys.orig_argv, os.environ)


def error_name(error: BaseException) -> str:
    """What a log may say about an exception: its type, never its message (which may quote input)."""
    return type(error).__name__
