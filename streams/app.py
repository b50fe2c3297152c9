"""The Faust application: topics, the state table, the OM processor, the LLM workers, the idle timer.

Guarantees:

* Exactly-once per input partition: Faust's ``exactly_once`` runs one Kafka transaction per
  partition, and a *commit fence* makes each processor batch atomic inside it — its outputs, its
  state changelog records and its input offsets commit together or not at all. Faust on its own
  commits on a timer that can fire between a batch's sends and its acks (splitting the batch
  across two transactions), and commits again while a rebalance waits for agents; so its timer is
  disabled and every commit, ours or Faust's, runs only between batches. The LLM agent sends a
  result and acks its job inside the same fence. A crash or a rebalance re-runs a batch or a job as
  if the first run never happened.
* No commit around a hole: every record a batch (or a job's result) sends is confirmed by the
  broker before the batch is acknowledged; a refused send, or any error escaping a batch, restarts
  the worker in place (streams/restart.py) so the open transaction never commits. What the fold
  sends fits the broker's record limit (streams/fold.py), so a refusal is transient, not a loop.
* Nothing fetched is dropped unread: Faust's flow control, fetch, seek, offset and recovery rules
  are corrected where they lost records around rebalances (streams/flow_resume.py,
  streams/fetch_positions.py, streams/commit_offsets.py, streams/recovery.py).
* One owner per lookup key: every topic is keyed by the lookup key and has the same partition
  count, so a key's messages, control events, results and state changelog share a partition number.
* A worker whose acknowledged processor input stays uncommitted while the broker answers (a
  transaction lost in a broker restart) restarts itself in place from the last commit
  (streams/stall_guard.py). The LLM agent's acks are not watched: with concurrent calls they
  complete out of order, so a slow call legitimately holds its partition's commit back.
* The changelog holds each key's state without its window's bodies, and each body once
  (streams/state_changelog.py): a batch writes bytes in proportion to what it changed.
* LLM calls run in their own agent (own consumer of the jobs topic, bounded concurrency: streams/llm_agent.py)
  and hold no state; the processor never waits for a model. The ``llm`` role, which has no table, still assigns
  with Faust's assignor, whose topic groups its transactions are named by (streams/split_assignor.py).

Roles: ``all`` runs both agents in one app; ``processor`` and ``llm`` split them into two apps (two
consumer groups) that scale independently. Do not mix ``all`` with split roles on one prefix.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from typing import Any

import faust

from processors.config import OMConfig
from processors.machine import idle_tick_reason
from schemas.control import IdleTick
from streams import commit_offsets, embedded, fetch_wait, flow_resume, llm_agent, metrics, state_snapshots, txn_retry
from streams.failpoint import crash_if_armed
from streams.fold import BatchFolder, InputRecord
from streams.hooks.redaction import redactor_for
from streams.idle_schedule import IdleSchedule
from streams.call_shutdown import CallShutdown
from streams.commit_pace import CommitPace
from streams.eager_take import take_eagerly
from streams.internal_topics import (
    MAX_RECORD_BYTES, STATE_TABLE, Role, app_id, changelog_config, changelog_topic, install_assignment_guard,
)
from streams.llm.client import LiteLLMClient
from streams.recovery import PromptTableManager
from streams.restart import error_name, restart_in_place
from streams.settings import Settings
from streams.stall_guard import StallGuard
from streams.state_changelog import StateTable
from streams.topics import RECORD_LIMIT, Topics
from streams.transactions import Outbox

NEVER = 10 * 365 * 86_400.0
HEARTBEAT_MAX_S = 1.0
log = logging.getLogger(__name__)


def broker_urls(bootstrap: str) -> list[str]:
    return [f"kafka://{host.strip()}" for host in bootstrap.split(",") if host.strip()]


def build_app(settings: Settings, config: OMConfig, role: Role = "all", *, llm: Any = None) -> faust.App:
    """``settings.replication`` must be resolved (streams.worker.prepare_broker reads the cluster's):
    Faust creates the state changelog and its leader topic with it."""
    if settings.replication is None:
        raise ValueError("settings.replication is unset: resolve it with streams.worker.prepare_broker first")
    topics = Topics.for_prefix(settings.topic_prefix)
    (settings.data_dir / "faust").mkdir(parents=True, exist_ok=True)
    app = faust.App(
        app_id(settings.topic_prefix, role),
        broker=broker_urls(settings.kafka_bootstrap),
        store="memory://",
        datadir=str(settings.data_dir / "faust"),  # Faust's default is ./<app id>-data, in the cwd
        processing_guarantee="exactly_once",
        topic_partitions=settings.partitions,
        topic_replication_factor=settings.replication,
        table_standby_replicas=0,
        consumer_auto_offset_reset="earliest",
        broker_commit_interval=NEVER,  # commits run under the fence, see _install_commit_fence
        broker_commit_every=1 << 62,
        web_enabled=True,  # health ("/"), Faust's "/performance/" and our Prometheus "/metrics" only:
        web_tables_enabled=False,  # /table/<name>/<key>/ served any tenant's state, and logged it on a 500
        web_router_enabled=False,  # /router/ lists workers and which one owns a key: an existence oracle
        web_graph_enabled=False,
        web_stats_enabled=False,
        web_metrics_enabled=True,
        web_host=settings.web_host,
        web_port=settings.web_port,
        web_bind=settings.web_host,
        producer_acks=-1,  # all in-sync replicas (at least min.insync.replicas) hold a record before it counts
        producer_linger_ms=1,
        # a batch's records for a partition in one produce request: 16 KiB record batches, the default,
        # each waiting for the broker's answer to the one before, took ~20 requests per batch (issue 20 item 1)
        producer_max_batch_size=RECORD_LIMIT,
        producer_max_request_size=MAX_RECORD_BYTES,
        recovery_consistency_check=False,  # a RocksDB check; the memory store has no persisted offsets
        TableManager=PromptTableManager,  # recovery ends at the last committed record, see streams/recovery.py
        broker_session_timeout=settings.session_timeout_ms / 1000,
        # a rebalance (a peer left or joined) is learnt at the next heartbeat: at most a second, not a third of the session
        broker_heartbeat_interval=min(HEARTBEAT_MAX_S, settings.session_timeout_ms / 3000),
    )

    fetch_wait.install(app, settings.fetch_max_wait_ms)
    flow_resume.install(app)
    txn_retry.install()
    install_assignment_guard(app)

    def topic(name: str) -> faust.TopicT:
        return app.topic(name, key_serializer="raw", value_serializer="raw", partitions=settings.partitions)

    out = {name: topic(name) for name in topics.all()}  # declared so Faust creates them alike
    fence = asyncio.Lock()
    shutdown = CallShutdown()
    app.om_call_shutdown = shutdown  # type: ignore[attr-defined]  # the worker calls begin() on SIGTERM
    app.om_awaited = _awaited_by_nobody  # type: ignore[attr-defined]  # the embedded reader's waits (streams/embedded_storage.py)
    pace = CommitPace(settings.commit_interval_ms / 1000)
    app.om_after_commit = []  # type: ignore[attr-defined]  # run under the fence after a commit that committed
    _install_commit_fence(app, settings, fence, shutdown, pace)
    _install_metrics_page(app)
    if role in ("all", "processor"):
        guard = StallGuard(app, settings)
        guard.install()
        _install_processor(app, settings, config, topics, fence, guard, pace)
        if embedded.is_embedded(settings):
            embedded.install(app, settings, config)
    if role in ("all", "llm"):
        llm_agent.install(app, settings, config, topics, out, llm or LiteLLMClient.from_settings(settings, config),
                          fence, shutdown, pace)
    return app


def _awaited_by_nobody(keys: Iterable[str]) -> bool:
    return False


def _install_metrics_page(app: faust.App) -> None:
    """``/metrics`` on the worker's web port: the process registry (streams/metrics.py), open like
    the health page — it carries no tenant data. Consumer lag is read from this app's consumer."""
    metrics.CONSUMER_LAG.watch(app)

    @app.page("/metrics")
    async def prometheus_metrics(self: Any, request: Any) -> Any:
        body, content_type = metrics.exposition()
        return self.bytes(body, headers={"Content-Type": content_type})


def _install_commit_fence(app: faust.App, settings: Settings, fence: asyncio.Lock, shutdown: CallShutdown,
                          pace: CommitPace) -> None:
    """Every commit waits for the fence — the committer's (streams/commit_pace.py), and Faust's own:
    during a rebalance its ``wait_empty`` commits while agents still work, which without the fence could commit half a
    processor batch, or an LLM result whose job is not yet acked (the new owner re-runs the job).

    The consumer is wrapped at the first assignment: only then is it the worker's transactional
    consumer, and nothing is in flight before it. Its committable-offset rule is replaced there
    too (streams/commit_offsets.py: never past a job still running). Once a stop abandoned model
    calls, nothing commits any more (streams/call_shutdown.py)."""

    @app.on_partitions_assigned.connect
    async def fence_every_commit(app: faust.App, assigned: set, **_: Any) -> None:
        consumer = app.consumer
        if getattr(consumer, "_om_fenced", False):
            return
        unfenced = consumer.commit

        async def fenced_commit(*args: Any, **kwargs: Any) -> bool:
            async with fence:
                if settings.stall_commits or not shutdown.commits_allowed:
                    return False
                committed = await unfenced(*args, **kwargs)
                if committed:
                    for hook in app.om_after_commit:  # type: ignore[attr-defined]
                        await hook()
                return committed

        consumer.commit = fenced_commit  # type: ignore[method-assign]
        commit_offsets.install(consumer)
        consumer._om_fenced = True  # type: ignore[attr-defined]

    @app.task
    async def commit_between_batches() -> None:
        """Commits when one is due (streams/commit_pace.py), looking when a batch or a result asks
        and when asked work's interval ends: never inside an agent, whose commit would wait for its
        own stream."""
        while True:
            await pace.asked()
            if pace.due():
                pace.committing()
                try:
                    await app.consumer.commit()
                except Exception as error:  # noqa: BLE001 - the committer must outlive a failed commit
                    log.warning("om.commit.failed", extra={"error": error_name(error)})
                    pace.ask()  # retried at the next tick; a commit that never succeeds is the stall guard's


def _install_processor(app: faust.App, settings: Settings, config: OMConfig, topics: Topics,
                       fence: asyncio.Lock, guard: StallGuard, pace: CommitPace) -> None:
    inputs = app.topic(*topics.inputs, key_serializer="raw", value_serializer="raw",
                       partitions=settings.partitions)
    changelog = app.topic(changelog_topic(app.conf.id), key_serializer="json",  # created by streams/worker.py
                          value_serializer="raw", partitions=settings.partitions,  # streams/state_changelog.py decodes
                          compacting=True, deleting=False,
                          config=changelog_config(app.conf.topic_replication_factor))
    schedule = IdleSchedule(config)
    table = app.tables.add(StateTable(app, name=STATE_TABLE, default=None, beacon=app.tables.beacon,
                                      partitions=settings.partitions, changelog_topic=changelog,
                                      data_dir=settings.data_dir, state_cache=settings.state_cache,
                                      schedule=schedule))
    metrics.STATE.watch(table)
    owners = table.owners
    state_snapshots.install(app, table, fence, settings.state_snapshot_s)

    @app.on_partitions_assigned.connect
    async def forget_moved(app: faust.App, assigned: set, **_: Any) -> None:
        """States of partitions we no longer own must not linger (the idle timer reads them).

        Only after the new assignment: a rebalance first revokes everything, and a partition that
        comes straight back keeps its in-memory state (Faust does not recover it again).
        """
        kept = {tp.partition for tp in assigned if tp.topic == topics.messages}
        for key in [k for k, p in owners.items() if p not in kept]:
            owners.pop(key, None)
            table.states.discard(key)
            table.unwritten.discard(key)
            schedule.discard(key)
        table.local.tracker.keep_only(kept)

    folder = BatchFolder(config, topics, record_limit=settings.large_record_limit or RECORD_LIMIT,
                         redactor=redactor_for(settings) if settings.redact else None)

    @app.agent(inputs, name="om-processor")
    async def om_processor(stream: faust.StreamT) -> None:
        async for events in take_eagerly(stream, settings.batch_max, within=settings.batch_within_ms / 1000):
            records = [InputRecord(e.message.topic, e.message.partition, e.message.offset, e.key, e.value,
                                   _log_time_ms(e.message.timestamp)) for e in events]
            async with fence:  # no commit may split this batch: effects, state and offsets go together
                started = time.monotonic()
                try:
                    await _fold_and_send(app, folder, changelog, table, owners, records, settings)
                except Exception as error:  # noqa: BLE001 - an unconfirmed batch must never commit
                    restart_in_place("om.processor.batch_failed", error=error_name(error),
                                     partitions=sorted({r.partition for r in records}))
                metrics.folded(records, time.monotonic() - started)
                for event in events:
                    await stream.ack(event)
                for record in records:  # acked in order and all at once: the guard may expect them committed
                    guard.acked(record.topic, record.partition, record.offset)
                # nothing waiting behind this batch, or a caller waiting to read it: commit it now, not an
                # interval later (streams/commit_pace.py)
                pace.ask(drained=stream.channel.queue.empty(),
                         awaited=app.om_awaited(record.key.decode() for record in records if record.key))

    @app.timer(interval=settings.idle_check_seconds, on_leader=False)
    async def idle_ticks() -> None:
        """Quiet keys whose idle TTL ran out for buffered work get one idle tick per reason."""
        now = int(time.time() * 1000)
        for n, key in enumerate(schedule.due(now)):
            if n % 256 == 255:
                await asyncio.sleep(0)  # a round after recovering many keys reads many states
            state = table.states.get(key)
            reason = idle_tick_reason(state, config, now) if state is not None else None
            schedule.checked(key, state, now)  # before any await: a batch meanwhile has the last word
            if reason is None or schedule.ticked.get(key) == reason:
                continue
            # outside any transaction: a quiet partition may have nothing to commit for a long time
            delivery = await app.producer.send(topics.control, key.encode(), IdleTick(key=key, at=now).to_bytes(),
                                               None, None, None)
            try:
                await delivery
            except Exception as error:  # noqa: BLE001 - not ticked: the next round tries again
                log.warning("om.idle_tick.not_sent", extra={"error": error_name(error)})
                metrics.failure("idle-tick-send")
                schedule.again(key)
                continue
            schedule.ticked[key] = reason


async def _fold_and_send(app: faust.App, folder: BatchFolder, changelog: faust.TopicT, table: Any,
                         owners: dict[str, int], records: list[InputRecord], settings: Settings) -> None:
    """Fold one batch and send its effects and state changes, each confirmed by the broker."""
    source = {r.partition: r.topic for r in records}
    result = folder.fold(records, table.states)
    outbox = Outbox(app)
    for record in result.outgoing:
        outbox.add(source[record.partition], record.partition, record.topic, record.key, record.value)
    changelog_name = changelog.get_topic_name()
    tracker = table.local.tracker
    touched = {*result.changed.values(), *result.deleted.values()}
    tracker.writing(touched)  # before the store holds them: a batch cut short leaves its partitions marked
    for key, partition in [*result.changed.items(), *result.deleted.items()]:
        if key in result.changed:
            owners[key] = partition
        else:
            owners.pop(key, None)
        for changelog_key, value in table.writes(key, result.before.get(key), table.states.get(key)):
            outbox.add(source[partition], partition, changelog_name, changelog_key, value)
    table.states.trim()
    sent = await outbox.confirm()
    for (transactional_id, topic, partition), last in sent.items():
        if topic == changelog_name:
            tracker.sent(transactional_id, partition, last)
    tracker.confirmed(touched)
    metrics.events_emitted(result.event_counts)
    for stage, field in result.dead_letter_reasons:
        metrics.dead_letter(stage, field)
    if result.results_without_state:
        metrics.failure("result-without-state", result.results_without_state)
    crash_if_armed(settings.crash_at, result.event_types)


def _log_time_ms(timestamp: float | None) -> int | None:
    """Faust gives the record's Kafka timestamp in seconds; the fold compares event times in ms."""
    return int(timestamp * 1000) if timestamp else None
