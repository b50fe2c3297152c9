"""Resuming the flow of records to the agents clears their queues only when it was stopped.

Faust (faust-streaming 0.15.3) resumes the flow twice after every rebalance that assigns state:
once while it reads the state changelog (``Recovery._restart_recovery``), and again in
``_resume_streams``, after resuming the input partitions and seeking them to their committed
offsets. mode's ``FlowControlEvent.resume`` clears every stream and channel queue each time, and
the second time the flow has been on for a while: input records fetched since — after the seek,
or on a partition the seek does not move — are dropped from the queues while the fetch position
has gone past them. Nothing read them again in that generation, and once a later record of the
same partition was acknowledged, the commit passed them for good. Seen on the three-node cluster
(tests/cluster/test_worker_loss.py, its partition dumps) as a thread's Observer job no worker
ran, and as a round of messages folded without one of them (no cycle began: its tokens were
missing), every offset committed.

The rule: ``resume`` on a flow already on does nothing. Resuming a stopped flow clears the queues
as before (what was queued before the stop belongs to the last generation).
"""

from __future__ import annotations

from typing import Any


def install(app: Any) -> None:
    """Before the app starts: its flow control's ``resume`` clears queues only on a real resume."""
    flow = app.flow_control
    resume = flow.resume

    def resume_if_stopped() -> None:
        if flow.is_active():
            return
        resume()

    flow.resume = resume_if_stopped
