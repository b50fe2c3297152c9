"""The worker's loop closes a moment after Faust's stop, not after mode's fixed second
(streams/worker.py): a restart's downtime is the stop plus the start."""

from __future__ import annotations

import asyncio
import inspect

from mode.worker import Worker as ModeWorker

from streams import worker


def test_the_loop_closes_after_a_settling_moment_not_modes_second(monkeypatch) -> None:
    assert "sleep(1.0)" in inspect.getsource(ModeWorker._sentinel_task), "mode's own wait changed: re-read it"
    slept: list[float] = []
    real_sleep = asyncio.sleep

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        await real_sleep(0)

    monkeypatch.setattr(worker.asyncio, "sleep", sleep)
    asyncio.run(worker._Worker._sentinel_task(object()))  # type: ignore[arg-type]
    assert slept == [worker.STOP_SETTLE_S] and worker.STOP_SETTLE_S < 0.2
