"""The topics of the pipeline, versioned and named from one prefix (``OM_TOPIC_PREFIX``).

Every input topic is keyed by the lookup key and has the same partition count, so one worker
owns a key's messages, control events and results together (ARCHITECTURE rule 1).
"""

from __future__ import annotations

from dataclasses import astuple, dataclass

VERSION = "v1"
RECORD_LIMIT = 1_000_000
"""Bytes of key + value any pipeline record may take: under Kafka's default ``max.message.bytes``
(1 MiB + 12), with room for the record batch's own header. The pipeline's topics are created
with the broker's defaults (the state changelog alone is raised, streams/app.py)."""


@dataclass(frozen=True)
class Topics:
    messages: str
    control: str
    jobs: str
    results: str
    events: str
    records: str
    dlq: str

    @classmethod
    def for_prefix(cls, prefix: str = "om") -> Topics:
        names = ("messages", "control", "jobs", "results", "events", "records", "dlq")
        return cls(*(f"{prefix}.{name}.{VERSION}" for name in names))

    @property
    def inputs(self) -> tuple[str, str, str]:
        """What the OM processor folds, in no particular order across topics."""
        return (self.messages, self.control, self.results)

    def all(self) -> tuple[str, ...]:
        return astuple(self)
