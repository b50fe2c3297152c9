"""Observation-group vectors in ClickHouse: indexing and nearest-neighbour search (spec §3.6, §8.4).

Indexing is idempotent: a chunk's row id is a UUID from ``sha256(JSON[resource, thread, group,
chunk])`` and the table keeps the newest version of each, so indexing the whole observation log
again after every observation (as Mastra does) replaces rows rather than adding them.

Search ranks by ``cosineDistance`` in ClickHouse, restricted to one resource (and optionally one
thread and an ``observed_at`` window) and to vectors of the same embedder; the score shown to the
agent is the cosine similarity ``1 − distance``. A brute-force scan over one resource's vectors
is fast at the scale of a user's memory (thousands of groups), so no vector index is declared.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from dataclasses import dataclass

import orjson
from clickhouse_connect.driver.client import Client

from processors.recall.groups import embedding_chunks, parse_observation_groups
from processors.recall.search import SearchHit
from streams.embeddings import Embedder

TABLE = "om_observation_vectors"
COLUMNS = [
    "resource_id", "thread_id", "group_id", "chunk_index", "id", "range", "text",
    "observed_at", "embedder", "embedding", "version",
]

_SEARCH = """
SELECT thread_id, group_id, any(range), argMin(text, distance), max(observed_at), 1 - min(distance) AS score
FROM (
    SELECT thread_id, group_id, range, text, observed_at,
           cosineDistance(embedding, {query:Array(Float32)}) AS distance
    FROM om_observation_vectors FINAL
    WHERE resource_id = {resource:String} AND embedder = {embedder:String}
      AND ({thread:String} = '' OR thread_id = {thread:String})
      AND ({after:Int64} < 0 OR observed_at > {after:Int64})
      AND ({before:Int64} < 0 OR observed_at < {before:Int64}))
GROUP BY thread_id, group_id
ORDER BY min(distance) ASC, thread_id, group_id
LIMIT {limit:UInt32}
"""


@dataclass(frozen=True)
class SearchFilter:
    thread_id: str | None = None
    observed_after: int | None = None
    observed_before: int | None = None

    @property
    def narrows(self) -> bool:
        return any(value is not None for value in (self.thread_id, self.observed_after, self.observed_before))


def vector_id(resource_id: str, thread_id: str, group_id: str, chunk_index: int) -> uuid.UUID:
    """Deterministic row id (UUID version 8 layout over the first 16 bytes of the sha256)."""
    digest = bytearray(hashlib.sha256(orjson.dumps([resource_id, thread_id, group_id, chunk_index])).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x80
    digest[8] = (digest[8] & 0x3F) | 0x80
    return uuid.UUID(bytes=bytes(digest))


def index_observation_groups(
    client: Client,
    embedder: Embedder,
    *,
    resource_id: str,
    thread_id: str,
    observations: str,
    observed_at: int,
    version: int | None = None,
    only: set[str] | None = None,
) -> int:
    """Embed and upsert every group of ``observations``; returns the number of chunks written.

    ``version`` orders competing writes of the same chunk (default: now in ms, so a later
    indexing run wins); ``only`` restricts the work to the named group ids.
    """
    rows = []
    stamp = version if version is not None else time.time_ns() // 1_000_000
    pieces = [
        (group, index, chunk)
        for group in parse_observation_groups(observations)
        if only is None or group.id in only
        for index, chunk in enumerate(embedding_chunks(group.content))
    ]
    vectors = embedder.embed([chunk for _, _, chunk in pieces]) if pieces else []
    for (group, index, chunk), vector in zip(pieces, vectors, strict=True):
        rows.append([
            resource_id, thread_id, group.id, index, vector_id(resource_id, thread_id, group.id, index),
            group.range, chunk, observed_at, embedder_tag(embedder), vector, stamp,
        ])
    if rows:
        client.insert(TABLE, rows, column_names=COLUMNS)
    return len(rows)


def search_observation_groups(
    client: Client, embedder: Embedder, resource_id: str, query: str, *, limit: int, where: SearchFilter | None = None
) -> list[SearchHit]:
    """The ``limit`` nearest groups of this resource, nearest first; a group scores by its best chunk."""
    where = where or SearchFilter()
    params = {
        "query": embedder.embed([query])[0],
        "resource": resource_id,
        "embedder": embedder_tag(embedder),
        "thread": where.thread_id or "",
        "after": -1 if where.observed_after is None else where.observed_after,
        "before": -1 if where.observed_before is None else where.observed_before,
        "limit": limit,
    }
    rows = client.query(_SEARCH, parameters=params).result_rows
    return [SearchHit(tid, float(score), gid, rng, text, int(at)) for tid, gid, rng, text, at, score in rows]


def embedder_tag(embedder: Embedder) -> str:
    return f"{embedder.name}/{embedder.dimension}"
