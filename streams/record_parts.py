"""A key's OM record on the changelog: a small head, its texts in blocks, its buffered chunks in a chain.

Issue 20 item 2: the record was written whole whenever a cycle changed it, 6.6 kB per message on a
2,000-message thread, because its observation log grows until a reflection rewrites it.

Rules this module keeps:

* **Three record kinds** (their shapes: streams/changelog_parts.py):
  ``\\0r\\0<lookup key>`` → the head, ``{"texts": {field: bytes}, "chunks": [last id, count],
  "record": ...}``: the record without its texts and chunks, written whenever the record changed;
  ``\\0x\\0<lookup key>\\0<letter><n>`` → block n of one of the record's texts (:data:`TEXTS`);
  ``\\0c\\0<lookup key>\\0<chunk id>`` → one buffered chunk, in a chain.
* **A cycle writes what it added**: an observation appended to the log writes the log's last block
  again and its new ones; a buffered chunk is one record and its activation one tombstone; a
  reflection (a new log) writes the new log and tombstones the blocks past its end. The head and the
  last block of each text that changed are what a change costs beyond that.
* **Chunks whose ids cannot key a chain** stay in the head's record (``"chunks": null``).
* **An older worker's record** (the whole record at ``\\0r\\0<lookup key>``) is still read.
"""

from __future__ import annotations

from operator import attrgetter

import orjson

from schemas.record import BufferedChunk, OMRecord
from streams.changelog_parts import Part, blocks, chain_head, chain_parts, chainable, read_blocks, read_chain
from streams.state_store import PartStore

HEAD, TEXT, CHUNK = "\x00r\x00", "\x00x\x00", "\x00c\x00"
TEXTS = {"active_observations": "o", "buffered_reflection": "b", "working_memory": "w"}
FAMILIES = (TEXT, CHUNK)  # a key's records past its head, each family under ``<family><key>\0``
_HEAD = b'{"texts":'
_AWAY = frozenset({*TEXTS, "buffered_chunks"})
_ID = attrgetter("id")


def record_parts(key: str, before: OMRecord | None, after: OMRecord | None, whole: bool = False) -> list[Part]:
    """The records of ``after`` (None: the key is deleted) written as ``before`` was."""
    out: list[Part] = []
    texts, old = _texts(after), _texts(before)
    for field, letter in TEXTS.items():
        out += blocks(f"{TEXT}{key}\x00{letter}", old.get(field), texts.get(field), whole)
    chunks = _chunks(after)
    out += chain_parts(f"{CHUNK}{key}\x00", _chunks(before) or (), chunks or (), _ID, BufferedChunk.to_bytes, whole)
    out.append((HEAD + key, None if after is None else _head(after, texts, chunks)))
    return out


def read_record(parts: PartStore, key: str) -> dict | None:
    """The key's record as an object (None: it has none)."""
    raw = parts.get(HEAD + key)
    if raw is None or not raw.startswith(_HEAD):
        return None if raw is None else orjson.loads(raw)  # an older worker's whole record
    head = orjson.loads(raw)
    record = head["record"]
    for field, size in head["texts"].items():
        record[field] = read_blocks(parts, f"{TEXT}{key}\x00{TEXTS[field]}", size).decode(errors="replace")
    if head["chunks"] is not None:
        record["buffered_chunks"] = [orjson.loads(p) for _, p in read_chain(parts, f"{CHUNK}{key}\x00", head["chunks"])]
    return record


def _texts(record: OMRecord | None) -> dict[str, bytes]:
    if record is None:
        return {}
    return {field: text.encode() for field in TEXTS if (text := getattr(record, field)) is not None}


def _chunks(record: OMRecord | None) -> tuple[BufferedChunk, ...] | None:
    """The record's chunks, to chain (None: their ids cannot key a chain)."""
    if record is None:
        return ()
    chunks = record.buffered_chunks
    return chunks if chainable([c.id for c in chunks]) else None


def _head(record: OMRecord, texts: dict[str, bytes], chunks: tuple[BufferedChunk, ...] | None) -> bytes:
    away = _AWAY if chunks is not None else _AWAY - {"buffered_chunks"}
    body = record.__pydantic_serializer__.to_json(record, exclude_none=True, exclude=away)
    return (_HEAD + orjson.dumps({field: len(text) for field, text in texts.items()})
            + b',"chunks":' + orjson.dumps(None if chunks is None else chain_head(chunks, _ID))
            + b',"record":' + body + b"}")
