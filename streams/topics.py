"""The topics of the pipeline, versioned and named from one prefix (``OM_TOPIC_PREFIX``).

Every input topic is keyed by the lookup key and has the same partition count, so one worker
owns a key's messages, control events and results together (ARCHITECTURE rule 1).
"""

from __future__ import annotations

from dataclasses import astuple, dataclass

VERSION = "v1"
RECORD_LIMIT = 1_000_000
"""Bytes of key + value a record may take on a topic with Kafka's default ``max.message.bytes``
(1 MiB + 12), with room for the record batch's own header: the input topics an app writes
(messages, control) and the dead letters."""
LARGE_RECORD_BYTES = 16 * 1024 * 1024
"""``max.message.bytes`` of the topics whose records may carry a whole observation log (jobs,
results, events, records: a Reflector's input and answer, a record snapshot) and of the state
changelog. ``reflection.observationTokens`` bounds the log, not its bytes; with the broker's 1 MiB a
threshold near 200,000 tokens made every snapshot after it too big to send."""
KAFKA_DEFAULT_MAX_MESSAGE_BYTES = 1_048_588


def record_limit(max_message_bytes: int) -> int:
    """Bytes of key + value a record may take on a topic of that ``max.message.bytes``: the same room
    below it as :data:`RECORD_LIMIT` keeps below Kafka's default."""
    return max_message_bytes - (KAFKA_DEFAULT_MAX_MESSAGE_BYTES - RECORD_LIMIT)


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

    def large(self) -> tuple[str, str, str, str]:
        """The topics created with :data:`LARGE_RECORD_BYTES`; the others keep the broker's default."""
        return (self.jobs, self.results, self.events, self.records)
