"""A deliberate crash at an exact point, for fault tests (``OM_CRASH_AT=<lifecycle event type>``).

A kill -9 from outside lands wherever the process happens to be. To prove that a batch which has
already *sent* an activation inside its open transaction, but not committed it, leaves no trace,
a test needs the crash at exactly that moment. The processor calls :func:`crash_if_armed` after a
batch's records and state are sent and before its offsets are acknowledged; SIGKILL ends the
process as abruptly as kill -9 (no shutdown hooks; the broker aborts the open transaction).
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Collection

log = logging.getLogger(__name__)


def crash_if_armed(armed: str, emitted: Collection[str]) -> None:
    """Kill this process if the batch emitted the armed event type; a no-op when nothing is armed."""
    if armed and armed in emitted:
        log.warning("om.failpoint.crash", extra={"at": armed})
        os.kill(os.getpid(), signal.SIGKILL)
