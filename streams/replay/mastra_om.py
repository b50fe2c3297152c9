"""Mastra's OM record rows (``mastra_observational_memory``, spec §3.1–3.4) as ``record-import`` events.

Per lookup key the importer takes the head row (highest ``generationCount``), the earlier rows as
history, the threads' OM metadata (``metadata.mastra.om``: hints, title, extracted values, the
per-thread cursor of resource scope), the threads' titles and the working memory (thread metadata
``workingMemory``, else the resource's row in ``mastra_resources``). Each of the key's messages is
classified as Mastra's ``getUnobservedMessages`` would (§4.1): in ``observedMessageIds``, or at or
before the cursor, or covered by a completed observation marker → observed; otherwise unobserved.

Skipped, and counted with the reason in the summary: working-memory *state signals* (Mastra's
bookkeeping messages; the working memory itself is imported), the legacy single-buffer fields
(``bufferedObservations``, before chunks existed), chunks naming messages that are not unobserved,
and thread metadata outside ``mastra.om`` (our record has no place for it).

Schema differences between Mastra versions (read off the published @mastra/core releases): the table
came with @mastra/core 1.2.0; 1.3.0 added the async-buffering columns (``ADDED_IN``), 1.9.0 a
``metadata`` column this importer does not read. A store missing a column of the first release is
refused, naming the column and the versions; one that predates 1.3.0 is imported with nothing
buffered, and the summary names the absent columns and the release that added them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from schemas.base import SchemaError
from schemas.messages import ChatMessage
from schemas.record import BufferedChunk, ThreadMeta
from schemas.record_import import ImportedGeneration, ImportedRecord, RecordImport
from streams.replay.mastra_format import epoch_ms
from streams.replay.source import ReplayInputError
from streams.replay.sqlite_jsonb import decode_jsonb

OM_TABLE = "mastra_observational_memory"
SCHEMA_VERSION_READ = "@mastra/core 1.71.0 (@mastra/memory 1.31.0)"
FIRST_OM_RELEASE = "1.2.0"  # the first @mastra/core release with the observational-memory table
REQUIRED = ("id", "lookupKey", "scope", "resourceId", "threadId", "activeObservations", "generationCount",
            "lastObservedAt", "observationTokenCount", "createdAt", "updatedAt")
OPTIONAL = ("originType", "totalTokensObserved", "pendingMessageTokens", "observedMessageIds",
            "observedTimezone", "activeObservationsPendingUpdate", "bufferedObservations",
            "bufferedObservationChunks", "bufferedReflection",
            "bufferedReflectionTokens", "bufferedReflectionInputTokens", "reflectedObservationLineCount",
            "lastBufferedAtTokens", "lastBufferedAtTime")
# the optional columns a later @mastra/core release added (the others came with FIRST_OM_RELEASE)
ADDED_IN = dict.fromkeys(("bufferedObservations", "bufferedObservationChunks", "bufferedReflection",
                          "bufferedReflectionTokens", "bufferedReflectionInputTokens", "reflectedObservationLineCount",
                          "lastBufferedAtTokens", "lastBufferedAtTime"), "1.3.0")
PART_BYTES = 512 * 1024  # well under Kafka's default 1 MB record


@dataclass
class ImportTally:
    """What an import carries, per kind, and what it left out and why (for the replay summary)."""

    records: int = 0
    generations: int = 0
    observations: int = 0  # keys whose active observations were imported
    chunks: int = 0
    buffered_reflections: int = 0
    titles: int = 0
    hints: int = 0
    working_memory: int = 0
    observed_messages: int = 0
    unobserved_messages: int = 0
    skipped: Counter[str] = field(default_factory=Counter)


def om_columns(columns: Iterable[str]) -> list[str]:
    """The OM columns to select; refuses a store whose table lacks a required one (names it)."""
    present = set(columns)
    for column in REQUIRED:
        if column not in present:
            raise ReplayInputError(
                f"{OM_TABLE} has no column {column!r}, which every Mastra store has had since @mastra/core "
                f"{FIRST_OM_RELEASE} (the first with observational memory); this importer reads the schema of "
                f"{SCHEMA_VERSION_READ}: upgrade the store with a Mastra 1.x that has it (start the app once with "
                "the new version) or replay with --messages-only")
    return [c for c in (*REQUIRED, *OPTIONAL) if c in present]


def absent_columns(columns: Iterable[str]) -> dict[str, list[str]]:
    """The optional OM columns a store lacks, by the @mastra/core release that added them."""
    present, absent = set(columns), {}
    for column in OPTIONAL:
        if column not in present:
            absent.setdefault(ADDED_IN.get(column, FIRST_OM_RELEASE), []).append(column)
    return absent


def note_absent_columns(absent: dict[str, list[str]], records: int, tally: ImportTally) -> None:
    for version, names in sorted(absent.items()):
        tally.skipped[f"OM columns added in @mastra/core {version} ({', '.join(names)}): absent from this "
                      "older store, read as empty"] += records


def json_value(value: Any) -> Any:
    """A JSON column as stored: JSON text (LibSQL ``text``), a JSONB blob (LibSQL ``jsonb``), or parsed (PG)."""
    if value is None:
        return None
    if isinstance(value, (bytes, memoryview)):
        return decode_jsonb(bytes(value))
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def _ms(value: Any) -> int | None:
    return None if value is None else epoch_ms(value)


@dataclass(frozen=True)
class MastraThread:
    id: str
    resource_id: str
    title: str | None
    metadata: dict[str, Any]


def thread_from_row(row: dict[str, Any]) -> MastraThread:
    metadata = json_value(row.get("metadata"))
    return MastraThread(row["id"], row["resourceId"], row.get("title"), metadata if isinstance(metadata, dict) else {})


def _om_meta(thread: MastraThread) -> dict[str, Any]:
    om = (thread.metadata.get("mastra") or {}).get("om")
    return om if isinstance(om, dict) else {}


def is_state_signal(message: ChatMessage) -> bool:
    signal = (message.metadata or {}).get("signal")
    return message.role == "signal" and isinstance(signal, dict) and signal.get("type") == "state"


def _marker_observed(message: ChatMessage) -> bool | None:
    """True when a completed observation marker covers the whole message, None when it has no marker."""
    kinds = [getattr(p, "type", "") for p in message.parts]
    ends = [i for i, kind in enumerate(kinds) if kind == "data-om-observation-end"]
    if not ends:
        return True if kinds and all(k.startswith("data-om-") for k in kinds) else None
    return all(k.startswith("data-om-") for k in kinds[ends[-1] + 1:])


def classify(message: ChatMessage, observed_ids: set[str], cursor: int | None) -> bool:
    """Whether Mastra had observed ``message`` (spec §4.1)."""
    if message.role == "system" or message.id in observed_ids:
        return True
    by_marker = _marker_observed(message)
    if by_marker is not None:
        return by_marker
    return cursor is not None and message.created_at <= cursor


def _chunk(raw: dict[str, Any]) -> BufferedChunk:
    return BufferedChunk(
        id=str(raw["id"]), cycle_id=str(raw.get("cycleId") or raw["id"]), observations=raw.get("observations") or "",
        token_count=int(raw.get("tokenCount") or 0), message_ids=tuple(raw.get("messageIds") or ()),
        message_tokens=int(raw.get("messageTokens") or 0),
        last_observed_at=epoch_ms(raw["lastObservedAt"]), created_at=epoch_ms(raw["createdAt"]),
        thread_title=raw.get("threadTitle"), extracted_values=raw.get("extractedValues"),
        extraction_failures=raw.get("extractionFailures"),
    )


def build_import(rows: list[dict[str, Any]], threads: list[MastraThread], messages: list[ChatMessage],
                 resource_wm: str | None, source: str, tally: ImportTally) -> Iterator[RecordImport]:
    """The parts of one key's import: ``rows`` are its generations, ``messages`` its threads' messages."""
    rows = sorted(rows, key=lambda r: int(r["generationCount"]))
    head = rows[-1]
    scope = head["scope"]
    key = head["lookupKey"]
    try:
        record, observed, unobserved = _record(head, rows[:-1], threads, messages, resource_wm, tally)
    except (KeyError, ValueError, SchemaError) as error:
        raise ReplayInputError(f"{source}: OM record {head['id']!r} ({key}): {error}") from error
    if scope not in ("thread", "resource"):
        raise ReplayInputError(f"{source}: OM record {head['id']!r} has scope {scope!r}")
    import_id = f"mastra:{head['id']}:{record.updated_at}"
    while record.history and len(record.to_bytes()) > PART_BYTES:  # the oldest go first
        record = record.model_copy(update={"history": record.history[1:]})
        tally.generations -= 1
        tally.skipped["earlier generations beyond one import part's size (the oldest)"] += 1
    pages = _pages(observed, unobserved)
    for part, (seen, unseen) in enumerate(pages):
        yield RecordImport(at=record.updated_at, key=key, import_id=import_id, part=part, parts=len(pages),
                           record=record if part == 0 else None, observed=seen, unobserved=unseen)


def _record(head: dict[str, Any], older: list[dict[str, Any]], threads: list[MastraThread],
            messages: list[ChatMessage], resource_wm: str | None,
            tally: ImportTally) -> tuple[ImportedRecord, list[ChatMessage], list[ChatMessage]]:
    scope = head["scope"]
    cursor = _ms(head.get("lastObservedAt"))
    observed_ids = set(json_value(head.get("observedMessageIds")) or ())
    cursors = {t.id: _ms(_om_meta(t).get("lastObservedAt")) or cursor for t in threads} if scope == "resource" else {}
    observed, unobserved = [], []
    for message in messages:
        if is_state_signal(message):
            tally.skipped["working-memory state signals (Mastra bookkeeping; the working memory is imported)"] += 1
            continue
        thread_cursor = cursors.get(message.thread_id, cursor)
        (observed if classify(message, observed_ids, thread_cursor) else unobserved).append(message)
    if head.get("activeObservationsPendingUpdate") or head.get("bufferedObservations"):  # Mastra reads the first
        tally.skipped["legacy buffered observations (pre-chunk format; their messages stay unobserved)"] += 1
    window = {m.id for m in unobserved}
    chunks = []
    for raw in json_value(head.get("bufferedObservationChunks")) or ():
        chunk = _chunk(raw)
        if not set(chunk.message_ids) <= window:
            tally.skipped["buffered chunks naming messages Mastra had observed or does not have"] += 1
            continue
        chunks.append(chunk)
    metas = {}
    for thread in threads:
        om = _om_meta(thread)
        metas[thread.id] = ThreadMeta(
            current_task=om.get("currentTask") or None, suggested_response=om.get("suggestedResponse") or None,
            thread_title=thread.title or om.get("threadTitle") or None,
            extracted=om.get("extracted") if isinstance(om.get("extracted"), dict) else {},
            last_observed_at=_ms(om.get("lastObservedAt")))
        if set(thread.metadata) - {"mastra", "workingMemory"}:
            tally.skipped["threads' own metadata outside mastra.om (no place for it in the record)"] += 1
    thread_wm = next((t.metadata["workingMemory"] for t in threads
                      if isinstance(t.metadata.get("workingMemory"), str)), None) if scope == "thread" else None
    working_memory = thread_wm or resource_wm
    record = ImportedRecord(
        scope=scope, thread_id=head.get("threadId") if scope == "thread" else None, resource_id=head["resourceId"],
        source_record_id=str(head["id"]), generation=int(head["generationCount"]),
        origin_type="reflection" if head.get("originType") == "reflection" else "initial",
        active_observations=head.get("activeObservations") or "",
        observation_token_count=int(head.get("observationTokenCount") or 0),
        total_tokens_observed=int(head.get("totalTokensObserved") or 0), last_observed_at=cursor,
        pending_message_tokens=int(head.get("pendingMessageTokens") or 0), buffered_chunks=tuple(chunks),
        buffered_reflection=head.get("bufferedReflection") or None,
        buffered_reflection_tokens=int(head.get("bufferedReflectionTokens") or 0),
        buffered_reflection_input_tokens=int(head.get("bufferedReflectionInputTokens") or 0),
        reflected_observation_line_count=int(head.get("reflectedObservationLineCount") or 0),
        last_buffered_at_tokens=int(head.get("lastBufferedAtTokens") or 0),
        last_buffered_at_time=_ms(head.get("lastBufferedAtTime")),
        observed_timezone=head.get("observedTimezone") or "UTC", working_memory=working_memory, threads=metas,
        history=tuple(ImportedGeneration(
            generation=int(r["generationCount"]), origin_type="reflection" if r.get("originType") == "reflection"
            else "initial", active_observations=r.get("activeObservations") or "",
            observation_token_count=int(r.get("observationTokenCount") or 0),
            last_observed_at=_ms(r.get("lastObservedAt")), created_at=epoch_ms(r["createdAt"]),
            updated_at=epoch_ms(r["updatedAt"])) for r in older),
        created_at=epoch_ms(head["createdAt"]), updated_at=epoch_ms(head["updatedAt"]),
    )
    _tally(tally, record, len(observed), len(unobserved))
    return record, observed, unobserved


def _tally(tally: ImportTally, record: ImportedRecord, observed: int, unobserved: int) -> None:
    tally.records += 1
    tally.generations += 1 + len(record.history)
    tally.observations += bool(record.active_observations)
    tally.chunks += len(record.buffered_chunks)
    tally.buffered_reflections += record.buffered_reflection is not None
    tally.titles += sum(1 for m in record.threads.values() if m.thread_title)
    tally.hints += sum(1 for m in record.threads.values() if m.current_task or m.suggested_response)
    tally.working_memory += record.working_memory is not None
    tally.observed_messages += observed
    tally.unobserved_messages += unobserved


def _pages(observed: list[ChatMessage], unobserved: list[ChatMessage]) -> list[tuple[list, list]]:
    """Messages split into parts of at most ``PART_BYTES`` (a message is never split); at least one part."""
    pages: list[tuple[list, list]] = [([], [])]
    size = 0
    for index, group in ((0, observed), (1, unobserved)):
        for message in group:
            length = len(message.to_bytes())
            if size and size + length > PART_BYTES:
                pages.append(([], []))
                size = 0
            pages[-1][index].append(message)
            size += length
    return pages
