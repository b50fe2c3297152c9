"""Faust's own topics (the state changelog, the leader topic): there before a worker joins its group.

Rules kept:

* **A topic the group leader's metadata lacks is left out of every assignment.** Faust's assignor
  skips it ("Ignoring missing topic") and aiokafka re-reads metadata only every five minutes. Seen
  in the cluster fault test: three workers started together on a fresh cluster, Faust created the
  changelog while the leader's metadata was being read, no worker was assigned a changelog
  partition for the whole run, and a killed worker's states were never recovered (the keys it
  had owned lost their Observer results as results without state).
* So :func:`ensure_internal_topics` creates them before Faust starts, configured as Faust declares
  them (``streams/app.py`` declares the same names and settings; Faust then finds them), and waits
  until every live broker's metadata lists them (streams/services/kafka_topics.py).
* And should a leader still assign while a subscribed topic is missing from its metadata (a topic
  deleted under a running group, a broker serving older metadata), :func:`install_assignment_guard`
  asks for fresh metadata until the topic appears or a deadline passes: aiokafka's metadata listener
  then sees the group's topics change and rebalances, so a partial assignment lasts seconds.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Literal

import faust

from streams import metrics
from streams.services.kafka_replication import Replication
from streams.services.kafka_topics import create_topics
from streams.topics import LARGE_RECORD_BYTES

log = logging.getLogger(__name__)

Role = Literal["all", "processor", "llm"]
STATE_TABLE = "om-state"
MAX_RECORD_BYTES = LARGE_RECORD_BYTES  # a changelog record may exceed Kafka's 1 MB default (an older worker's full state)
REFRESH_EVERY_S = 0.5
REFRESH_FOR_S = 120.0


def app_id(prefix: str, role: Role) -> str:
    """The Faust app (and consumer group) id of a role: ``all`` and the split roles never share one."""
    return f"{prefix}-{'worker' if role == 'all' else role}"


def changelog_topic(app: str) -> str:
    return f"{app}-{STATE_TABLE}-changelog"


def leader_topic(app: str) -> str:
    """Faust's leader assignor topic (faust/assignor/leader_assignor.py names it so)."""
    return f"{app}-__assignor-__leader"


def changelog_config(replication: int) -> dict[str, str]:
    """Besides ``cleanup.policy=compact``, which Faust sets from ``compacting=True``."""
    return {"max.message.bytes": str(MAX_RECORD_BYTES), **Replication.for_factor(replication).topic_config()}


def internal_topics(prefix: str, role: Role) -> list[str]:
    """The names of a role's Faust topics: the state changelog (the roles that hold the state
    table) and the leader topic."""
    app = app_id(prefix, role)
    return ([changelog_topic(app)] if role in ("all", "processor") else []) + [leader_topic(app)]


async def ensure_internal_topics(bootstrap: str, prefix: str, role: Role, partitions: int, replication: int) -> None:
    *changelog, leader = internal_topics(prefix, role)
    if changelog:
        await create_topics(bootstrap, changelog, partitions, replication, same_partitions=True,
                            config={"cleanup.policy": "compact", **changelog_config(replication)})
    await create_topics(bootstrap, [leader], 1, replication)


def install_assignment_guard(app: faust.App) -> None:
    """On the group leader: a subscribed topic missing from the metadata it assigns with gets its
    metadata asked for again, until it appears (the group then rebalances) or ``REFRESH_FOR_S``."""
    assignor = app.assignor
    assign = assignor.assign
    refreshing: set[str] = set()

    def guarded(cluster: Any, member_metadata: Any) -> Any:
        subscribed = {t for member in member_metadata.values() for t in member.subscription}
        missing = sorted(t for t in subscribed if not cluster.partitions_for_topic(t))
        if missing and not refreshing:
            refreshing.update(missing)
            log.warning("om.assignment.topics_missing", extra={
                "topics": missing, "action": "asking for fresh metadata; the group rebalances once they appear"})
            metrics.failure("assignment-topic-missing", len(missing))
            client = app.consumer._thread._ensure_consumer()._client  # aiokafka's, in this (the consumer's) loop
            task = asyncio.ensure_future(_refresh_until_present(client, cluster, missing))
            task.add_done_callback(lambda _: refreshing.clear())
        return assign(cluster, member_metadata)

    assignor.assign = guarded  # type: ignore[method-assign]  # aiokafka calls this object's assign


async def _refresh_until_present(client: Any, cluster: Any, topics: list[str]) -> None:
    deadline = asyncio.get_running_loop().time() + REFRESH_FOR_S
    while any(not cluster.partitions_for_topic(t) for t in topics):
        if asyncio.get_running_loop().time() > deadline:
            log.error("om.assignment.topics_still_missing", extra={
                "topics": topics, "action": "create them (om run creates them at start) or restart the workers"})
            return
        try:
            await client.force_metadata_update()
        except Exception as error:  # noqa: BLE001 - a refused refresh is retried at the next turn
            log.info("om.assignment.metadata_refresh_failed", extra={"error": type(error).__name__})
        await asyncio.sleep(REFRESH_EVERY_S)
