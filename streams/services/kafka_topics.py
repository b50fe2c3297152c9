"""Creating and deleting topics through the Kafka admin API (never by auto-creation).

Auto-created topics get the broker's default partition count; every topic the project relies on
is created explicitly so its partition count is a decision, not an accident.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError, UnknownTopicOrPartitionError


async def create_topics(
    bootstrap: str,
    names: Iterable[str],
    partitions: int = 1,
    replication: int = 1,
    timeout: float = 30.0,
) -> None:
    """Create each topic that does not exist yet, and return once every one is described.

    A freshly created topic takes a moment to reach the metadata every broker serves (KRaft
    propagates it asynchronously); callers that produce or describe right away need it there.
    """
    wanted = list(names)
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        missing = [
            NewTopic(n, num_partitions=partitions, replication_factor=replication)
            for n in wanted
            if n not in existing
        ]
        if missing:
            try:
                await admin.create_topics(missing)
            except TopicAlreadyExistsError:
                pass  # created concurrently by another client: the outcome we wanted
        await _until_described(admin, wanted, timeout)
    finally:
        await admin.close()


async def _until_described(admin: AIOKafkaAdminClient, names: list[str], timeout: float) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        described = await admin.describe_topics(names)
        if all(d["error_code"] == 0 and d["partitions"] for d in described):
            return
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"topics {names} not visible in metadata after {timeout}s")
        await asyncio.sleep(0.05)


async def delete_topics(bootstrap: str, names: Iterable[str]) -> None:
    """Delete the named topics; names that do not exist are ignored."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        present = [n for n in names if n in set(await admin.list_topics())]
        if present:
            try:
                await admin.delete_topics(present)
            except UnknownTopicOrPartitionError:
                pass
    finally:
        await admin.close()
