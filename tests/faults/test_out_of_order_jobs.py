"""Two Observer jobs of one jobs partition finish out of order, then the worker is killed -9.

The first thread's Observer call hangs (``slow_match``: its prompt holds a marked message) while
the second thread's job, behind it in the same partition, answers at once. Faust's own offset rule committed the partition past the hanging job as soon as
the later one was acknowledged, so after the kill no one ran it again and its thread's cycle
stayed in flight for ever (streams/commit_offsets.py). Here the restarted worker must run it, and
the pipeline must end as an undisturbed run does.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from schemas.messages import ChatMessage
from streams.om_config import load_config
from streams.settings import Settings
from tests.faults.conftest import FaultReport
from tests.faults.test_worker_kill import CONFIG, FAST_MODEL, Logs, check_as_undisturbed, restart_fast
from tests.integration.pipeline import (
    EventLog,
    WorkerProcess,
    conversation,
    expected_run,
    gated_conversation,
    wait_until,
)

pytestmark = pytest.mark.integration

HANG_MS = 600_000  # far longer than the test: the marked call never answers before the kill
MARK = "zebra"  # in t0's first message only; no other message has the word


def overtaken(log: EventLog) -> tuple[str, str] | None:
    """(hanging key, overtaking key): a buffering cycle still open while one begun after it has ended."""
    ended = {event.cycle_id for _, event in log.arrivals if event.type == "buffering-end"}
    started = [(key, event.cycle_id) for key, event in log.arrivals if event.type == "buffering-start"]
    for position, (key, cycle) in enumerate(started):
        later = next((k for k, c in started[position + 1:] if c in ended), None)
        if cycle not in ended and later is not None:
            return key, later
    return None


async def test_a_job_overtaken_by_a_later_one_runs_again_after_a_kill(
    kafka_bootstrap: str, tmp_path: Path, fault: FaultReport
) -> None:
    workers = WorkerProcess(kafka_bootstrap, f"o{uuid.uuid4().hex[:8]}", CONFIG, tmp_path, partitions=1,
                            model=f"om-deterministic/observer?latency_ms={HANG_MS}&slow_match={MARK}",
                            extra_env={"OM_LLM_CONCURRENCY": "4"})  # the harness runs one call at a time
    messages = conversation(threads=2, per_thread=16)
    first = messages[0]
    assert first.id == "t0-m0" and all(MARK not in m.to_bytes().decode() for m in messages)
    messages[0] = ChatMessage.model_validate(
        {**first.model_dump(), "parts": [{"type": "text", "text": f"{MARK} {first.parts[0].text}"}]})
    config = load_config(Settings(model=FAST_MODEL, config_file=None), overrides=CONFIG)  # the same answers, at once
    expected = await expected_run(messages, config)
    assert all(events[0][0] == "buffering-start" for events in expected.events.values()), \
        "round 1 must begin a buffering cycle in each thread"
    workers.start()
    killed: list[tuple[str, str]] = []
    try:
        async with Logs(kafka_bootstrap, workers) as logs:
            log = logs.events

            async def kill_when_overtaken(round_number: int) -> None:
                if round_number != 1:
                    return
                await wait_until(lambda: overtaken(log) is not None, 60,
                                 "no later job finished while the first one hung")
                hanging, later = overtaken(log)  # type: ignore[misc]
                workers.kill()
                killed.append((hanging, later))
                fault.broke(f"kill -9 while {hanging}'s Observer call hung and {later}'s later job had finished")
                for handle in workers.handles:  # from here on, results in issue order, as the core's run has them
                    handle.env["OM_LLM_CONCURRENCY"] = "1"
                restart_fast(workers)

            await gated_conversation(kafka_bootstrap, logs.topics.messages, log, expected, messages, config,
                                     after_produce=kill_when_overtaken)
            assert killed, "the fault happened"
            fault.checked(f"{killed[0][0]}'s overtaken job ran again after the restart")
            await check_as_undisturbed(logs, expected, messages, fault)
    finally:
        workers.stop()
