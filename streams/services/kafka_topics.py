"""Creating and deleting topics through the Kafka admin API (never by auto-creation).

Auto-created topics get the broker's default partition count; every topic the project relies on
is created explicitly so its partition count is a decision, not an accident. Replication left
unset (``None``) is the cluster's own ``default.replication.factor``, read from a live broker, so a
worker creates replicated topics on a cluster and single-copy ones on the local broker from the
same settings; ``min.insync.replicas`` follows it (streams/services/kafka_replication.py).

**A worker never asks for the whole cluster's metadata.** A metadata request with no topic list
answers with every topic in the cluster, and aiokafka's admin asks that for ``list_topics`` and
``describe_cluster`` alike: on a shared cluster each answer costs the client ~0.1 s a thousand
topics to decode, and a worker's start made sixteen (3,000 foreign topics took a restart from
~1.5 s to 3.3 s, issue 20 item 4). :func:`metadata` asks for the named topics only (``[]``: the
brokers alone) and never creates one by asking. Listing by prefix (:func:`delete_topics`,
:func:`partition_states`: tests, benchmarks, ``om services``) still reads every topic.

**The pipeline's topics keep the configured partition count.** They are co-partitioned (a key's
messages, results and state share a partition number), so a worker that finds one made before
with another count stops and says what to do (:class:`PartitionsMismatch`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping

from aiokafka import AIOKafkaClient
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.errors import (
    KafkaError,
    LeaderNotAvailableError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
    for_code,
)
from aiokafka.protocol.api import Response
from aiokafka.protocol.metadata import MetadataRequest

from streams.services.kafka_replication import Replication

DEFAULT_REPLICATION = "default.replication.factor"
MAX_MESSAGE_BYTES = "max.message.bytes"
_EXISTS = (0, LeaderNotAvailableError.errno)  # any other answer: create it, and its refusal says why


class PartitionsMismatch(ValueError):
    """Topics made before with another partition count than the one configured; ``str()`` says what to do."""

    def __init__(self, found: Mapping[str, int], partitions: int) -> None:
        counts = ", ".join(f"{name} has {count}" for name, count in sorted(found.items()))
        super().__init__(f"topics made before have another partition count than OM_PARTITIONS={partitions} ({counts}); "
                         f"a key's messages, results and state must share a partition number, so set OM_PARTITIONS "
                         f"to the count they have, or delete them (their records too) and start again")
        self.found = dict(found)


async def create_topics(
    bootstrap: str,
    names: Iterable[str],
    partitions: int = 1,
    replication: int | None = 1,
    timeout: float = 30.0,
    config: Mapping[str, str] | None = None,
    same_partitions: bool = False,
) -> Replication:
    """Create each topic that does not exist yet, and return once every live broker describes
    every one. ``config``: topic settings besides ``min.insync.replicas`` (which follows the
    replication); a topic that exists already is left as it is, but with ``same_partitions`` one with
    another partition count raises :class:`PartitionsMismatch` (the pipeline's co-partitioned topics).

    A freshly created topic takes a moment to reach the metadata every broker serves (KRaft
    propagates it asynchronously); callers that produce, describe or subscribe right away need it
    there, on whichever broker they ask (a consumer group's leader assigns only the topics its
    metadata knows, streams/internal_topics.py).
    Returns the replication used (``None``: the cluster's default), for the topics Faust creates.
    """
    wanted = list(names)
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        policy = Replication.for_factor(replication if replication is not None else await cluster_replication(admin))
        described = (await metadata(admin._client, wanted)).to_object()["topics"]
        existing = {t["topic"] for t in described if t["error_code"] in _EXISTS}
        if same_partitions and (other := {t["topic"]: len(t["partitions"]) for t in described
                                          if t["error_code"] == 0 and len(t["partitions"]) != partitions}):
            raise PartitionsMismatch(other, partitions)
        missing = [
            NewTopic(n, num_partitions=partitions, replication_factor=policy.factor,
                     topic_configs={**(config or {}), **policy.topic_config()})
            for n in wanted
            if n not in existing
        ]
        if missing:
            try:
                _raise_refusal(await admin.create_topics(missing))
            except TopicAlreadyExistsError:
                pass  # created concurrently by another client: the outcome we wanted
        await _until_described(admin, wanted, timeout)
        return policy
    finally:
        await admin.close()


async def metadata(client: AIOKafkaClient, topics: list[str], node: int | None = None) -> Response:
    """The metadata of ``topics`` only (``[]``: the brokers alone), from ``node`` (None: any broker
    ``client`` knows); a topic that does not exist is answered with its error, not created."""
    request = MetadataRequest(topics, allow_auto_topic_creation=False)
    return await client.send(client.get_random_node() if node is None else node, request)


async def _brokers(admin: AIOKafkaAdminClient) -> list[int]:
    return [broker["node_id"] for broker in (await metadata(admin._client, [])).to_object()["brokers"]]


async def cluster_replication(admin: AIOKafkaAdminClient) -> int:
    """The ``default.replication.factor`` of the first live broker that answers."""
    error: Exception | None = None
    for node in await _brokers(admin):
        resource = ConfigResource(ConfigResourceType.BROKER, str(node), {DEFAULT_REPLICATION: None})
        try:
            [response] = await admin.describe_configs([resource])
        except (KafkaError, OSError) as refused:
            error = refused
            continue
        for entry in response.to_object()["resources"][0]["config_entries"]:
            if entry["config_names"] == DEFAULT_REPLICATION:
                return int(entry["config_value"])
    raise KafkaError(f"no broker told its {DEFAULT_REPLICATION}: {error!r}")


async def max_message_bytes(bootstrap: str, names: Iterable[str]) -> dict[str, int]:
    """Each topic's effective ``max.message.bytes`` (its own setting, else the broker's default)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        resources = [ConfigResource(ConfigResourceType.TOPIC, name, {MAX_MESSAGE_BYTES: None}) for name in names]
        out = {}
        for response in await admin.describe_configs(resources):  # one request for all of them
            for resource in response.to_object()["resources"]:
                for entry in resource["config_entries"]:
                    if entry["config_names"] == MAX_MESSAGE_BYTES:
                        out[resource["resource_name"]] = int(entry["config_value"])
        return out
    finally:
        await admin.close()


def _raise_refusal(response: object) -> None:
    """aiokafka returns a refused creation as a response; e.g. replication 3 with a node missing."""
    for name, code, *message in getattr(response, "topic_errors", []):
        if code and code != TopicAlreadyExistsError.errno:
            raise for_code(code)(f"creating topic {name}: {' '.join(map(str, message))}")


async def _until_described(admin: AIOKafkaAdminClient, names: list[str], timeout: float) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        lagging = [node for node in await _brokers(admin) if not await _describes(admin, node, names)]
        if not lagging:
            return
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"topics {names} not in the metadata of broker(s) {lagging} after {timeout}s")
        await asyncio.sleep(0.05)


async def _describes(admin: AIOKafkaAdminClient, node: int, names: list[str]) -> bool:
    """Whether broker ``node``'s metadata has every topic of ``names``, with its partitions."""
    try:  # aiokafka's describe_topics asks a random broker; this asks the one named
        response = await metadata(admin._client, names, node)
    except (KafkaError, OSError):
        return True  # a broker that cannot be reached serves no client either; the rest decide
    return all(t["error_code"] == 0 and t["partitions"] for t in response.to_object()["topics"])


async def delete_topics(bootstrap: str, names: Iterable[str], *, prefixes: tuple[str, ...] = ()) -> None:
    """Delete the named topics, and every topic whose name starts with one of ``prefixes``; names
    that do not exist are ignored."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        existing = set(await admin.list_topics())  # one metadata request, not one per name
        present = sorted({n for n in names if n in existing} | {t for t in existing if t.startswith(prefixes)})
        if present:
            try:
                await admin.delete_topics(present)
            except UnknownTopicOrPartitionError:
                pass
    finally:
        await admin.close()


PartitionState = tuple[int, list[int], list[int]]  # leader, replicas, in-sync replicas


async def partition_states(bootstrap: str, prefix: str) -> dict[tuple[str, int], PartitionState]:
    """(topic, partition) -> (leader, replicas, isr) for the pipeline's topics and Faust's
    (``<prefix>.*`` and ``<prefix>-*``): who leads what, and who is in sync."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
    await admin.start()
    try:
        names = [n for n in await admin.list_topics() if n.startswith((f"{prefix}.", f"{prefix}-"))]
        described = await admin.describe_topics(names) if names else []
        return {(d["topic"], p["partition"]): (p["leader"], p["replicas"], p["isr"])
                for d in described for p in d["partitions"]}
    finally:
        await admin.close()
