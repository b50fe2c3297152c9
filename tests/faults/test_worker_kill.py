"""kill -9 of the worker during buffering, activation and reflection, and a worker joining mid-stream.

After each fault the pipeline must show what an undisturbed run shows: the core's own run of the
same messages (tests/integration/pipeline.py) gives the expected lifecycle events and the final
record snapshot. Checked after every fault: the same event sequence, the same final observation
log, chunks and cursor, no message lost (each is observed, buffered, or after the cursor), no
message observed twice within a generation, the cursor never moving back.
"""

from __future__ import annotations

import signal
import time
import uuid
from pathlib import Path

import pytest
from aiokafka.partitioner import murmur2

from schemas.deltas import ChunkChanged, MessagesObserved, RecordSnapshot, decode_delta
from schemas.messages import ChatMessage
from streams.om_config import load_config
from streams.settings import Settings
from streams.topics import Topics
from streams.harness.worker_log import log_events
from streams.harness.workers import next_log_event
from tests.faults.conftest import FaultReport
from tests.integration.forgotten_transactions import (
    partition_verification_off,
    transactional_ids,
    write_forgotten_batch,
)
from tests.integration.pipeline import (
    EventLog,
    ExpectedRun,
    WorkerProcess,
    conversation,
    expected_run,
    gated_conversation,
    wait_until,
    worker_config,
)

pytestmark = pytest.mark.integration

CONFIG = {"observation": {"messageTokens": 1500}, "reflection": {"observationTokens": 1200}}
SLOW_MODEL = "om-deterministic/observer?latency_ms=800"  # slow enough to be killed mid-call
FAST_MODEL = "om-deterministic/observer"  # the same answers; the restarted worker needs no kill window


def restart_fast(workers: WorkerProcess) -> None:
    """Restart the killed workers answering at once: the rest of the run only has to be right."""
    for handle in workers.handles:
        handle.env["OM_MODEL"] = FAST_MODEL
    workers.restart_killed()


@pytest.fixture
def workers(kafka_bootstrap: str, tmp_path: Path):
    group = WorkerProcess(kafka_bootstrap, f"r{uuid.uuid4().hex[:8]}", CONFIG, tmp_path, partitions=4)
    yield group
    group.stop()


class Logs:
    """The committed events and record deltas of a worker group, read as they arrive."""

    def __init__(self, bootstrap: str, workers: WorkerProcess) -> None:
        topics = Topics.for_prefix(workers.prefix)
        self.topics = topics
        self.events = EventLog(bootstrap, topics.events)
        self.records = EventLog(bootstrap, topics.records, decoder=decode_delta)

    async def __aenter__(self) -> Logs:
        await self.events.__aenter__()
        await self.records.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.records.__aexit__(*exc)
        await self.events.__aexit__(*exc)


async def check_as_undisturbed(logs: Logs, expected: ExpectedRun, messages: list[ChatMessage],
                               fault: FaultReport) -> None:
    """``version`` (inputs applied) may exceed the core's: a result re-delivered across a rebalance
    is applied as a counted no-op (KeyState.counters); everything the agent and the tables see must
    be equal."""
    redelivered = 0
    for key, events in expected.events.items():
        assert logs.events.signatures(key) == events, f"{key}: lifecycle events differ from the core's run"
        final = expected.snapshots[key]
        try:
            await wait_until(lambda: _same_but_version(_snapshots(logs, key)[-1:], final), 30, "")
        except AssertionError:
            raise AssertionError(f"{key}: the final record snapshot differs from the core's run: "
                                 f"{_differences(_snapshots(logs, key)[-1], final)}") from None
        redelivered += _snapshots(logs, key)[-1].version - final.version
        cursors = [s.record.last_observed_at or 0 for s in _snapshots(logs, key)]
        assert cursors == sorted(cursors), f"{key}: the cursor moved back"
        deltas = logs.records.by_key[key]
        observed = {m for d in deltas if isinstance(d, MessagesObserved) for m in d.message_ids}
        observed |= {m for chunk in final.record.buffered_chunks for m in chunk.message_ids}
        cursor = final.record.last_observed_at or 0
        lost = [m.id for m in messages if f"thread:{m.thread_id}" == key and m.id not in observed
                and m.created_at < cursor]  # behind the cursor, so out of the unobserved window for good
        assert not lost, f"{key}: messages behind the cursor never observed: {lost[:5]}"
        activated: dict[int, list[str]] = {}
        for d in deltas:
            if isinstance(d, ChunkChanged) and d.status == "activated":
                activated.setdefault(d.generation, []).extend(d.chunk.message_ids)
        for generation, ids in activated.items():
            assert len(ids) == len(set(ids)), f"{key}: a message observed twice in generation {generation}"
    fault.checked("lifecycle events and the final observation log, chunks and cursor equal the core's "
                  "undisturbed run; no message lost or observed twice; cursor monotonic"
                  + (f"; {redelivered} re-delivered input(s) ignored by the core" if redelivered else ""))


def _same_but_version(got: list[RecordSnapshot], want: RecordSnapshot) -> bool:
    return len(got) == 1 and got[0].version >= want.version and got[0].model_copy(update={"version": want.version}) == want


def _differences(got: RecordSnapshot, want: RecordSnapshot) -> dict[str, tuple[object, object]]:
    mine, theirs = got.model_dump(), want.model_dump()
    record = {f"record.{k}": (v, theirs["record"][k]) for k, v in mine.pop("record").items()
              if v != theirs["record"][k]}
    return {**record, **{k: (v, theirs[k]) for k, v in mine.items() if k not in ("record", "version") and v != theirs[k]}}


def _snapshots(logs: Logs, key: str) -> list[RecordSnapshot]:
    return [d for d in logs.records.by_key[key] if isinstance(d, RecordSnapshot)]


async def test_kill_9_during_a_buffering_cycle_changes_nothing(
    workers: WorkerProcess, kafka_bootstrap: str, fault: FaultReport
) -> None:
    messages = conversation(threads=1, per_thread=36)  # the first cycle buffers at message 6
    config = worker_config(workers)  # the fast model's: the same answers, and the expected run needs no waits
    expected = await expected_run(messages, config)
    workers.model = SLOW_MODEL
    assert any(s[0] == "buffering-start" for s in expected.events["thread:t0"])
    workers.start()
    killed = []

    async with Logs(kafka_bootstrap, workers) as logs:
        log = logs.events

        async def kill_mid_cycle(round_number: int) -> None:
            if killed:
                return
            before = log.count("thread:t0", "buffering-start")
            ends = log.count("thread:t0", "buffering-end")
            await wait_until(lambda: log.count("thread:t0", "buffering-start") > before or
                             log.count("thread:t0", "buffering-end") > ends, 30, "no buffering cycle began")
            if log.count("thread:t0", "buffering-start") > log.count("thread:t0", "buffering-end"):
                workers.kill()
                killed.append(round_number)
                fault.broke(f"kill -9 of the worker while an Observer call was in flight (round {round_number})")
                restart_fast(workers)

        await gated_conversation(kafka_bootstrap, logs.topics.messages, log, expected, messages, config,
                                 after_produce=kill_mid_cycle)
        assert killed, "the worker was never caught mid-cycle"
        await check_as_undisturbed(logs, expected, messages, fault)


async def test_kill_9_during_an_activation_changes_nothing(
    workers: WorkerProcess, kafka_bootstrap: str, fault: FaultReport
) -> None:
    messages = conversation(threads=1, per_thread=40)  # the first activation comes at message 24
    config = worker_config(workers)
    expected = await expected_run(messages, config)
    events, gates = expected.events["thread:t0"], expected.gates["thread:t0"]
    first = next(i for i, s in enumerate(events) if s[0] == "activation")
    crash_round = next(n for n, (_, count) in enumerate(gates, 1) if count > first)
    workers.extra_env["OM_CRASH_AT"] = "activation"
    workers.start()

    async with Logs(kafka_bootstrap, workers) as logs:
        async def crashed_in_activation(round_number: int) -> None:
            if round_number != crash_round:
                return
            proc = workers.handles[0].proc
            assert proc is not None
            await wait_until(lambda: proc.poll() is not None, 60, "the worker never reached the activation")
            assert proc.returncode == -signal.SIGKILL, f"the worker ended with {proc.returncode}, not SIGKILL"
            fault.broke("the worker SIGKILLed itself after sending an activation's events, chunk changes and "
                        "state, before committing them (OM_CRASH_AT=activation)")
            assert logs.events.count("thread:t0", "activation") == 0, "an uncommitted activation was visible"
            forged = await forge_forgotten_event(kafka_bootstrap, workers, logs, "thread:t0")
            fault.broke(f"and the broker 'forgot' a transaction: a copy of an earlier event sits uncommitted on "
                        f"events under each of the worker's {forged} transactional ids (as after a broker restart)")
            workers.restart_killed(without_env=("OM_CRASH_AT",))

        async with partition_verification_off(kafka_bootstrap):
            await gated_conversation(kafka_bootstrap, logs.topics.messages, logs.events, expected, messages, config,
                                     after_produce=crashed_in_activation)
        aborted = sum(h.log.read_bytes().count(b"om.txn.hanging") for h in workers.handles)
        assert aborted, "the restarted worker aborted nothing"
        fault.checked(f"the restarted worker aborted the {aborted} forgotten transaction(s) before producing")
        await check_as_undisturbed(logs, expected, messages, fault)


async def forge_forgotten_event(bootstrap: str, workers: WorkerProcess, logs: Logs, key: str) -> int:
    """Under each of the dead worker's transactional ids, a copy of ``key``'s first lifecycle event
    written to the events partition of ``key`` with no transaction to end it. Left there, the
    restarted producer's first commit would make it visible: one event too many."""
    copy = next(e for e in logs.events.by_key[key] if e.type != "status").to_bytes()
    partition = (murmur2(key.encode()) & 0x7FFFFFFF) % workers.partitions  # the key's partition, as produced
    ids = await transactional_ids(bootstrap, f"{workers.prefix}-worker-")
    assert ids, "the worker has no transactional ids yet"
    for txn_id in ids:
        await write_forgotten_batch(bootstrap, txn_id, logs.topics.events, copy, key=key.encode(), partition=partition)
    return len(ids)


async def test_kill_9_during_a_reflection_changes_nothing(
    workers: WorkerProcess, kafka_bootstrap: str, fault: FaultReport
) -> None:
    messages = conversation(threads=1, per_thread=40)  # the first reflection begins at message 24
    config = worker_config(workers)  # the fast model's: the same answers, and the expected run needs no waits
    expected = await expected_run(messages, config)
    workers.model = SLOW_MODEL  # reflector calls are slow too
    events = expected.events["thread:t0"]
    gates = expected.gates["thread:t0"]
    starts = [i for i, s in enumerate(events) if s[2] == "reflection" and s[0].endswith("-start")]
    assert starts, "the conversation must reflect"
    kill_round = next(n for n, (_, count) in enumerate(gates, 1) if count > starts[0])
    start_signature = events[starts[0]]
    caught: list[bool] = []
    workers.start()
    async with Logs(kafka_bootstrap, workers) as logs:
        log = logs.events

        async def kill_mid_reflection(round_number: int) -> None:
            if round_number != kill_round:
                return
            await wait_until(lambda: start_signature in log.signatures("thread:t0"), 60, "no reflection began")
            ended = {s[1] for s in log.signatures("thread:t0") if s[0].endswith(("-end", "activation"))}
            caught.append(start_signature[1] not in ended)
            workers.kill()
            fault.broke(f"kill -9 of the worker while the Reflector call {start_signature[1]} was in flight")
            restart_fast(workers)

        await gated_conversation(kafka_bootstrap, logs.topics.messages, log, expected, messages, config,
                                 after_produce=kill_mid_reflection)
        assert caught == [True], "the worker was killed while the reflection was in flight"
        await check_as_undisturbed(logs, expected, messages, fault)


async def test_a_second_worker_joining_mid_stream_loses_and_duplicates_nothing(
    workers: WorkerProcess, kafka_bootstrap: str, fault: FaultReport
) -> None:
    messages = conversation(threads=4, per_thread=40)  # a dozen rounds after the join at round 2
    config = worker_config(workers)
    expected = await expected_run(messages, config)
    workers.start()

    async with Logs(kafka_bootstrap, workers) as logs:
        async def add_worker(round_number: int) -> None:
            if round_number == 2:
                workers.start()
                fault.broke("a second worker joined mid-stream: partitions and their state moved (rebalance)")

        await gated_conversation(kafka_bootstrap, logs.topics.messages, logs.events, expected, messages, config,
                                 after_produce=add_worker)
        assert len(workers.handles) == 2
        await check_as_undisturbed(logs, expected, messages, fault)


async def test_restarts_adopt_the_kept_store_or_its_snapshot_and_change_nothing(
    kafka_bootstrap: str, tmp_path: Path, fault: FaultReport
) -> None:
    """Issue 20 items 4 and 5: a worker stopped cleanly keeps its local store, and one killed -9
    leaves its last snapshot (streams/state_snapshots.py); the restarted worker adopts it and reads
    only the changelog after its checkpoint (streams/state_checkpoint.py). The run must still be the
    core's, and no restart may read the records before its checkpoint."""
    workers = WorkerProcess(kafka_bootstrap, f"c{uuid.uuid4().hex[:8]}", CONFIG, tmp_path, partitions=4,
                            extra_env={"OM_LOG_LEVEL": "INFO"})
    messages = conversation(threads=4, per_thread=40)
    config = worker_config(workers)
    expected = await expected_run(messages, config)
    handle = workers.start()
    stops: list[int] = []
    try:
        async with Logs(kafka_bootstrap, workers) as logs:
            async def stop_and_start(round_number: int) -> None:
                if round_number in (3, 6):
                    handle.stop()
                    stops.append(round_number)
                    fault.broke(f"a clean stop (SIGTERM, exit {handle.proc.returncode}) and a start, after round "
                                f"{round_number}")
                    handle.start(f"http://127.0.0.1:{handle.env['OM_WEB_PORT']}/")
                elif round_number == 8:
                    await next_log_event(handle.log, "om.state_store.snapshot", 30, "no snapshot of the store was made")
                    handle.kill()
                    stops.append(round_number)
                    fault.broke(f"kill -9 after round {round_number}, once the store's snapshot was made")
                    handle.start(f"http://127.0.0.1:{handle.env['OM_WEB_PORT']}/")

            await gated_conversation(kafka_bootstrap, logs.topics.messages, logs.events, expected, messages, config,
                                     after_round=stop_and_start)
            assert stops == [3, 6, 8]
            await check_as_undisturbed(logs, expected, messages, fault)
        kept = log_events(handle.log, "om.state_store.kept")
        adopted = log_events(handle.log, "om.state_store.adopted")
        adoptions = log_events(handle.log, "om.state_store.adoption")
        reads = log_events(handle.log, "om.recovery.bulk_read")
        holding = kept[0]["partitions"] if kept else []  # the partitions the 4 threads' keys fall in
        assert len(kept) == 2 and holding and all(k["partitions"] == holding and k["keys"] == 4 for k in kept), \
            [(k["partitions"], k["keys"]) for k in kept]
        assert [a["snapshot"] for a in adopted] == [False, False, True], adopted
        assert [(a["adopted"], a["dropped"]) for a in adoptions] == [(holding, [])] * 3, adoptions
        assert len(reads) == 4 and [r["offsets"] for r in reads[1:]] == [0, 0, 0], \
            f"the restarts read the changelog again: {[r['offsets'] for r in reads]}"
        fault.checked(f"each restart adopted the kept store or its snapshot (4 keys, partitions {holding}) and "
                      "read no changelog record from before it")
    finally:
        workers.stop()


async def test_sigterm_during_a_model_call_stops_within_seconds_and_the_job_runs_once_after_restart(
    kafka_bootstrap: str, tmp_path: Path, fault: FaultReport
) -> None:
    """Issue 24: a stop used to wait for the call in flight (minutes with a real model)."""
    call_s = 20
    config = {"observation": {"messageTokens": 600, "bufferTokens": False}, "reflection": {"observationTokens": 50_000}}
    workers = WorkerProcess(kafka_bootstrap, f"s{uuid.uuid4().hex[:8]}", config, tmp_path, partitions=2,
                            model=f"om-deterministic/observer?latency_ms={call_s * 1000}")
    messages = conversation(threads=1, per_thread=14)
    fast = load_config(Settings(model="om-deterministic/observer", config_file=None), overrides=config)
    expected = await expected_run(messages, fast)
    assert any(s[0] == "observation-start" for s in expected.events["thread:t0"])
    handle = workers.start()
    stopped: list[float] = []
    try:
        async with Logs(kafka_bootstrap, workers) as logs:
            log = logs.events

            async def stop_mid_call(round_number: int) -> None:
                if stopped:
                    return
                await wait_until(lambda: log.count("thread:t0", "observation-start") > 0, 30,
                                 "no observation cycle began")
                assert log.count("thread:t0", "observation-end") == 0
                started = time.monotonic()
                handle.proc.send_signal(signal.SIGTERM)
                handle.proc.wait(timeout=call_s)
                stopped.append(time.monotonic() - started)
                fault.broke(f"SIGTERM while an Observer call ({call_s} s) was in flight: exited in "
                            f"{stopped[0]:.1f} s with code {handle.proc.returncode}")
                restart_fast(workers)

            await gated_conversation(kafka_bootstrap, logs.topics.messages, log, expected, messages, fast,
                                     after_produce=stop_mid_call)
            assert stopped and stopped[0] < 8, f"the stop took {stopped} s"
            ends = [e.cycle_id for e in log.by_key["thread:t0"] if e.type == "observation-end"]
            assert len(ends) == len(set(ends)), "a cycle's result was applied twice"
            await check_as_undisturbed(logs, expected, messages, fault)
    finally:
        workers.stop()
