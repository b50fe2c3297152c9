"""streams/stop_deadline.py: the first stop signal arms one timer that exits; 0 disables it."""

from __future__ import annotations

import threading

from streams.stop_deadline import StopDeadline


def test_the_first_arm_exits_after_the_grace_and_later_arms_change_nothing() -> None:
    exited = threading.Event()
    codes: list[int] = []

    def exit_now(code: int) -> None:
        codes.append(code)
        exited.set()

    deadline = StopDeadline(0.05, exit_now=exit_now)
    deadline.arm()
    first = deadline._timer
    deadline.arm()
    assert deadline._timer is first, "a second signal must not restart the clock"
    assert exited.wait(5), "the process was not ended after its grace"
    assert codes == [0]


def test_zero_grace_never_arms() -> None:
    deadline = StopDeadline(0, exit_now=lambda code: (_ for _ in ()).throw(AssertionError("exited")))
    deadline.arm()
    assert not deadline.armed
