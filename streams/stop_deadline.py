"""A stop signal ends the process within ``OM_STOP_GRACE_S`` seconds, however long Faust's own stop takes.

Faust's graceful stop (agents, the open transaction, leaving the group, producers, the web
server) usually takes a second or two, but nothing bounds it: on a loaded machine it was seen past
20 s, and an orchestrator that sends SIGTERM and waits would then SIGKILL at its own moment. So
the first stop signal arms a timer; when it fires, the process exits at once, as a kill -9 would
leave it — which the fault tests show is safe: uncommitted work is re-read from the last commit,
open transactions are aborted by the next owner, and each cycle's result is applied once.

Rules kept: only the first stop signal arms it; 0 disables it (Faust's stop takes what it takes);
the timer thread is a daemon, so a stop that finishes first exits normally and the timer with it.
"""

from __future__ import annotations

import logging
import os
import threading

log = logging.getLogger(__name__)


class StopDeadline:
    def __init__(self, grace_s: float, exit_now=os._exit) -> None:
        self.grace_s = grace_s
        self._exit_now = exit_now
        self._timer: threading.Timer | None = None

    @property
    def armed(self) -> bool:
        return self._timer is not None

    def arm(self) -> None:
        if self.grace_s <= 0 or self._timer is not None:
            return
        self._timer = threading.Timer(self.grace_s, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def _expire(self) -> None:
        log.warning("om.stop.deadline", extra={
            "grace_s": self.grace_s, "action": "exiting now; the next start resumes from the last commit"})
        for handler in logging.getLogger().handlers:
            handler.flush()
        self._exit_now(0)
