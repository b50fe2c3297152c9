"""A worker without state tables still assigns with Faust's assignor when it runs transactions.

faust-streaming 0.15.3's aiokafka driver (``_create_worker_consumer``) picks aiokafka's round-robin
assignor for an app with no changelog table and no standby replicas — our ``llm`` role. But under
``exactly_once`` Faust starts one transactional producer per assigned partition, named by the
partition's *topic group*, which only Faust's assignor hands out (``assignor.group_for_topic``).
With round-robin the groups are empty: the first assignment crashed the LLM worker with
``KeyError('<prefix>.jobs.v1')`` (bench 1b's split roles; tests/integration/test_split_roles.py).

Rule kept: a consumer that reads in transactions assigns with the app's own (Faust's) assignor,
set on the aiokafka consumer before it starts, as Faust does for apps with tables. Nothing else
about the consumer changes; a non-transactional app keeps Faust's choice.
"""

from __future__ import annotations

from typing import Any


class TransactionalAssignor:
    """Mixed into Faust's aiokafka consumer thread (streams/fetch_wait.py builds the class)."""

    app: Any
    consumer: Any  # Faust's Consumer, which knows whether it reads in transactions

    def _create_worker_consumer(self, transport: Any) -> Any:
        consumer = super()._create_worker_consumer(transport)  # type: ignore[misc]
        if self.consumer.in_transaction:
            consumer._partition_assignment_strategy = [self.app.assignor]  # aiokafka reads it in start()
        return consumer
