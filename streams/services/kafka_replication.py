"""How many copies of each record a cluster of N Kafka nodes keeps: one rule, used everywhere.

The local broker's config (deploy/local/kafka/server.properties), the internal topics it creates
(__consumer_offsets, __transaction_state) and every topic the pipeline creates (its own and Faust's
changelog) take their replication and ``min.insync.replicas`` from here, so a three-node cluster
differs from the single broker by settings only:

* replication = the node count, at most 3 (a fourth copy buys little and costs a full write);
* ``min.insync.replicas`` = a majority of the replicas when there are 3 or more (2 of 3: one node
  may be lost without refusing writes or losing an acknowledged one), else 1.

Producers use ``acks=all`` (Faust's transactional producer, the idempotent ones), so a write
counts only once ``min.insync.replicas`` copies hold it.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_REPLICATION = 3


@dataclass(frozen=True)
class Replication:
    factor: int
    min_insync: int

    @classmethod
    def for_nodes(cls, nodes: int) -> Replication:
        if nodes < 1:
            raise ValueError(f"a Kafka cluster has at least one node, not {nodes}")
        return cls.for_factor(min(nodes, MAX_REPLICATION))

    @classmethod
    def for_factor(cls, factor: int) -> Replication:
        return cls(factor, factor // 2 + 1 if factor >= 3 else 1)

    def topic_config(self) -> dict[str, str]:
        """Per-topic setting, so a topic keeps it on a cluster whose broker default differs."""
        return {"min.insync.replicas": str(self.min_insync)}
