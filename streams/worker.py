"""``om run``: start a worker — the OM processor, the LLM workers, or both — until interrupted.

Faust's Worker owns the event loop and the signals: SIGINT/SIGTERM stop the agents, let the open
transaction finish or abort, and leave the consumer group cleanly. Model calls still in flight are
abandoned first (streams/call_shutdown.py), so the stop takes seconds, not the length of a call;
and whatever Faust's stop still takes, the process is gone ``OM_STOP_GRACE_S`` after the signal
(streams/stop_deadline.py). Once Faust has stopped, the loop closes after :data:`STOP_SETTLE_S` for the
callbacks the stop scheduled, not mode's fixed second (``Worker._sentinel_task``, mode 4.x): a
restart's downtime is the stop plus the start, and that second was most of the stop.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import faust
from aiokafka.errors import KafkaError

from streams import gc_tuning, logs, tracing
from streams.app import Role, build_app
from streams.group_predecessor import claim_slot, leave_for_predecessor, members_dir
from streams.internal_topics import ensure_internal_topics, internal_topics
from streams.llm.deterministic import offline
from streams.llm.endpoints import configured_models
from streams.llm.models import is_offline
from streams.services.kafka_health import start_when_reachable
from streams.services.kafka_topics import MAX_MESSAGE_BYTES, PartitionsMismatch, create_topics, max_message_bytes
from streams.services.txn_cleanup import TxnCleanupError, abort_hanging_transactions
from streams.settings import Settings
from streams.startup import configured
from streams.stop_deadline import StopDeadline
from streams.topics import LARGE_RECORD_BYTES, Topics, record_limit

log = logging.getLogger(__name__)
STOP_SETTLE_S = 0.05  # after Faust's stop, before the loop closes: transports' close callbacks run


async def ensure_topics(settings: Settings, role: Role | None = None) -> Settings:
    """Create the pipeline's topics with the configured partitions before any producer or agent,
    and, for a ``role``, the topics its Faust app uses (streams/internal_topics.py: a consumer group
    assigns only topics its leader's metadata knows). The topics that carry an observation log take
    large records (streams/topics.py). The settings returned carry the replication used (unset: the
    cluster's default), so every topic Faust declares gets the same, and the bytes a record may take
    on those topics, as they are (``large_record_limit``: the processor's records fit it). For a
    ``role`` (a worker), topics made before with another partition count than the settings' raise
    :class:`PartitionsMismatch`; a tool that only sends (``om replay``) takes them as they were made."""
    topics = Topics.for_prefix(settings.topic_prefix)
    large = topics.large()
    strict = role is not None  # a worker reads them co-partitioned; a tool that only sends takes them as made
    used = await create_topics(settings.kafka_bootstrap, [n for n in topics.all() if n not in large],
                               settings.partitions, settings.replication, same_partitions=strict)
    await create_topics(settings.kafka_bootstrap, large, settings.partitions, used.factor,
                        config={MAX_MESSAGE_BYTES: str(LARGE_RECORD_BYTES)}, same_partitions=strict)
    limit = record_limit(min((await max_message_bytes(settings.kafka_bootstrap, large)).values()))
    if limit < record_limit(LARGE_RECORD_BYTES):
        log.warning("om.topics.small_records", extra={
            "record_limit": limit, "action": f"topics made before this version keep the broker's default; raise "
                                             f"{MAX_MESSAGE_BYTES} of the jobs, results, events and records topics to "
                                             f"{LARGE_RECORD_BYTES} (kafka-configs.sh --alter) so a large observation "
                                             f"log fits"})
    if role is not None:
        await ensure_internal_topics(settings.kafka_bootstrap, settings.topic_prefix, role, settings.partitions,
                                     used.factor)
    return settings.model_copy(update={"replication": used.factor, "large_record_limit": limit})


async def prepare_broker(settings: Settings, role: Role = "all") -> Settings:
    """Topics first, then abort what a broker left hanging on them (the pipeline's topics and the
    role's Faust topics, by name): before this worker's producers exist, or their first commit would
    carry a forgotten batch (see :mod:`streams.hanging_txns`).

    A failed cleanup is logged, not fatal: the worker is still correct unless a transaction
    really hangs, and then the stall guard restarts it, which runs this again. A broker not up
    yet (or restarting) delays the start instead of ending it."""
    settings = await start_when_reachable(lambda: ensure_topics(settings, role), settings.kafka_bootstrap, "worker")
    try:
        await abort_hanging_transactions(settings.kafka_bootstrap, [
            *Topics.for_prefix(settings.topic_prefix).all(), *internal_topics(settings.topic_prefix, role)])
    except (TxnCleanupError, KafkaError, OSError) as error:
        log.error("om.txn.cleanup_failed", extra={
            "error": repr(error), "action": "starting anyway; if consumers stall, list hanging transactions with "
                                            "kafka-transactions.sh find-hanging and abort them"})
    return settings


class _Worker(faust.Worker):
    def __init__(self, app: faust.App, *, stop_deadline: StopDeadline, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self.om_stop_deadline = stop_deadline

    async def _sentinel_task(self) -> None:
        await asyncio.sleep(STOP_SETTLE_S)

    def _schedule_shutdown(self, signal: Any) -> None:
        self.om_stop_deadline.arm()
        shutdown = getattr(self.app, "om_call_shutdown", None)
        if shutdown is not None:
            shutdown.begin()
        super()._schedule_shutdown(signal)


def run_worker(role: Role = "all") -> None:
    settings, config = configured(models=role != "processor")  # or exit with one line
    logs.configure(settings.log_level)
    try:
        tracing.start(role=role)  # off unless OTEL_* asks for it (streams/tracing/settings.py)
    except tracing.TracingConfigError as error:
        raise SystemExit(f"om: bad configuration: {error}") from None
    if role == "all":  # off the interpreter lock the fold shares; an llm role has nothing else to run
        # a worker whose configured models are a provider's starts no child unless an offline call comes
        offline.answer_in_processes(settings.offline_model_processes,
                                    warm=any(is_offline(model) for _, model in configured_models(config)))
    try:
        settings = asyncio.run(prepare_broker(settings, role))
    except PartitionsMismatch as error:
        raise SystemExit(f"om: {error}") from None
    app = build_app(settings, config, role)
    # a predecessor killed -9 leaves now, not a session later (streams/group_predecessor.py)
    app.om_member_slot = claim_slot(members_dir(settings.data_dir), app.conf.id)
    if app.om_member_slot is not None:
        asyncio.run(leave_for_predecessor(settings.kafka_bootstrap, app.om_member_slot))
    # override_logging=False: Faust would add its own plain-text handler beside ours (every line twice)
    worker = _Worker(app, stop_deadline=StopDeadline(settings.stop_grace_s), loglevel=settings.log_level,
                     override_logging=False)
    gc_tuning.tune()  # start-up is done: its objects are frozen out of collections
    worker.execute_from_commandline()
