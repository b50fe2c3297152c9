"""Embedding observation groups as record snapshots arrive, so recall can search them (§8.4).

Each group is embedded once per sink process (ids are deterministic, so a restart that re-embeds
only rewrites the same rows). Runs after the batch's rows are in ClickHouse, off the insert path.
"""

from __future__ import annotations

import orjson
from clickhouse_connect.driver.client import Client

from processors.recall.groups import parse_observation_groups
from schemas.base import SchemaError
from schemas.deltas import RecordSnapshot
from streams.embeddings import Embedder
from streams.reader.observation_vectors import index_observation_groups


class GroupIndexer:
    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._done: set[tuple[str, str]] = set()

    def __call__(self, client: Client, snapshots: list[RecordSnapshot]) -> int:
        written = 0
        for snapshot in snapshots:
            record = snapshot.record
            text = record.active_observations
            new = {g.id for g in parse_observation_groups(text) if (record.key, g.id) not in self._done}
            if not new:
                continue
            written += index_observation_groups(
                client, self.embedder, resource_id=record.resource_id, thread_id=record.thread_id or "",
                observations=text, observed_at=snapshot.at, version=snapshot.version, only=new)
            self._done.update((record.key, group) for group in new)
        return written


def snapshot_of(value: bytes | None) -> RecordSnapshot | None:
    """The record snapshot a records-topic value holds, or None (another delta, or undecodable)."""
    if not value or b'"record-snapshot"' not in value:
        return None
    try:
        return RecordSnapshot.from_obj(orjson.loads(value))
    except (SchemaError, ValueError):
        return None
