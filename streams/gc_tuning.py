"""The worker's cyclic garbage collector, set for a process that allocates per message (issue 20 item 1).

With CPython's thresholds (700, 10, 10) the processor collected its young generation ~45 times per
thousand messages and its whole heap (the modules, Faust, chDB's bindings, the key states) twice in
bench 1b's 5,000, at ~0.1 s each: 0.06–0.07 ms of CPU per message, 8 % of the process's. A batch
allocates thousands of objects that live until it ends, so young collections also promoted them
to where only a full collection finds them.

Rules this module keeps:

* What start-up built lives as long as the process, so it is frozen out of every collection
  (``gc.freeze``): a full collection traverses only what the worker made since.
* The young generation is collected every :data:`YOUNG` net allocations, not 700; the older
  generations keep CPython's ratios. Collection stays on: reference cycles are still freed.
"""

from __future__ import annotations

import gc

YOUNG = 10_000


def tune() -> None:
    """Freeze what exists now and collect the young generation less often; call once, after start-up."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG, middle, old)
