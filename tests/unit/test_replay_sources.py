"""Replay sources convert faithfully, in a deterministic order; checkpoints resume exactly."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson
import pytest

from processors.tokens import get_counter
from schemas.messages import ChatMessage, DataPart, FilePart, ReasoningPart, StepStartPart, TextPart, ToolInvocationPart
from streams.replay.checkpoint import CheckpointFile, Progress
from streams.replay.locomo import LoCoMoSource, session_start_ms
from streams.replay.mastra_om import ImportTally
from streams.replay.mastra_sources import MastraSQLiteSource
from streams.replay.runner import ReplayOptions, batch_size, pacing_delay, replay
from streams.replay.source import ReplayInputError
from streams.replay.sources import JsonlSource, detect_format, open_source
from streams.topics import Topics
from tests import mastra_import
from tests.mastra_store import build_store, iso, sample_store, text_content

T0 = 1_714_000_000_000


# -- Mastra SQLite ---------------------------------------------------------------------------------


def test_mastra_sqlite_yields_each_thread_in_created_order_with_original_times(tmp_path: Path) -> None:
    source = MastraSQLiteSource(sample_store(tmp_path / "mastra.db", threads=2, per_thread=5))
    messages = list(source.messages())
    assert source.count() == len(messages) == 10
    for t in range(2):
        mine = [m for m in messages if m.thread_id == f"mt{t}"]
        assert [m.id for m in mine] == [f"mt{t}-m{i}" for i in range(5)]
        assert [m.created_at for m in mine] == [T0 + i * 60_000 + t for i in range(5)]
        assert {m.resource_id for m in mine} == {f"user{t}"}
        assert [m.role for m in mine] == ["user", "assistant", "user", "assistant", "user"]
    assert messages[0].parts == [TextPart(text="thread 0 turn 0: notes about the garden and the trip")]
    assert list(source.messages()) == messages  # deterministic: a position is a valid checkpoint


def test_mastra_format_2_parts_become_our_parts(tmp_path: Path) -> None:
    content = {
        "format": 2,
        "metadata": {"client": "web"},
        "parts": [
            {"type": "step-start"},
            {"type": "reasoning", "reasoning": "", "details": [{"type": "text", "text": "think "}, {"type": "text", "text": "hard"}]},
            {"type": "tool-invocation", "toolInvocation": {"state": "result", "toolCallId": "c1", "toolName": "weather",
                                                           "args": {"city": "Lisbon"}, "result": {"temp": 21}, "step": 0}},
            {"type": "text", "text": "It is 21°C.", "providerMetadata": {"mastra": {"tokenEstimate": 7}}},
            {"type": "file", "mimeType": "application/pdf", "data": "https://x/doc.pdf"},
            {"type": "source", "source": {"url": "https://x"}},
            {"type": "data-om-status", "data": {"n": 1}},
        ],
    }
    db = build_store(tmp_path / "m.db", {"th": "res"}, [
        {"id": "a1", "thread_id": "th", "role": "assistant", "created_at": T0, "content": orjson.dumps(content).decode()},
    ])
    (message,) = MastraSQLiteSource(db).messages()
    step, reasoning, tool, text, file, source, data = message.parts
    assert isinstance(step, StepStartPart)
    assert isinstance(reasoning, ReasoningPart) and reasoning.text == "think hard"
    assert isinstance(tool, ToolInvocationPart)
    assert (tool.tool_call_id, tool.tool_name, tool.state, tool.args, tool.result) == (
        "c1", "weather", "result", {"city": "Lisbon"}, {"temp": 21})
    assert isinstance(text, TextPart) and text.token_estimate() == 7
    assert isinstance(file, FilePart) and (file.mime_type, file.data) == ("application/pdf", "https://x/doc.pdf")
    assert isinstance(source, DataPart) and source.type == "data-mastra-source" and source.data["source"]["url"] == "https://x"
    assert isinstance(data, DataPart) and data.type == "data-om-status"
    assert message.metadata == {"client": "web"}
    assert [p.type for p in message.visible_parts()] == ["reasoning", "tool-invocation", "text", "file"]


def test_older_mastra_rows_plain_text_and_v1_arrays_are_read(tmp_path: Path) -> None:
    v1 = [{"type": "text", "text": "calling"}, {"type": "tool-call", "toolCallId": "c9", "toolName": "search", "args": {"q": "x"}}]
    db = build_store(tmp_path / "m.db", {"th": "res"}, [
        {"id": "u1", "thread_id": "th", "role": "user", "created_at": T0, "content": "not json at all"},
        {"id": "a1", "thread_id": "th", "role": "assistant", "created_at": T0 + 1, "content": orjson.dumps(v1).decode()},
        {"id": "a2", "thread_id": "th", "role": "assistant", "created_at": T0 + 2,
         "content": orjson.dumps({"format": 2, "parts": [], "content": "only content"}).decode()},
    ])
    u1, a1, a2 = MastraSQLiteSource(db).messages()
    assert u1.parts == [TextPart(text="not json at all")]
    assert a1.parts[0] == TextPart(text="calling")
    assert isinstance(a1.parts[1], ToolInvocationPart) and a1.parts[1].state == "call" and a1.parts[1].args == {"q": "x"}
    assert a2.parts == [TextPart(text="only content")]


def test_thread_owner_wins_over_a_missing_or_stale_message_resource(tmp_path: Path) -> None:
    db = build_store(tmp_path / "m.db", {"th": "current-owner"}, [
        {"id": "m1", "thread_id": "th", "role": "user", "created_at": T0, "content": text_content("a"), "resource_id": None},
        {"id": "m2", "thread_id": "th", "role": "user", "created_at": T0 + 1, "content": text_content("b"),
         "resource_id": "old-owner"},
    ])
    assert {m.resource_id for m in MastraSQLiteSource(db).messages()} == {"current-owner"}


def test_timestamps_keep_milliseconds(tmp_path: Path) -> None:
    db = build_store(tmp_path / "m.db", {"th": "r"}, [
        {"id": "m1", "thread_id": "th", "role": "user", "created_at": T0 + 123, "content": text_content("a")}])
    assert iso(T0 + 123).endswith(".123Z")
    assert next(MastraSQLiteSource(db).messages()).created_at == T0 + 123


def test_a_sqlite_file_without_mastra_tables_is_refused_with_the_reason(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE x (y)").connection.close()
    with pytest.raises(ReplayInputError, match="mastra_threads and mastra_messages"):
        MastraSQLiteSource(other).count()


# -- LoCoMo ----------------------------------------------------------------------------------------

LOCOMO = [{
    "sample_id": "conv-7",
    "conversation": {
        "speaker_a": "Caroline", "speaker_b": "Melanie",
        "session_10_date_time": "9:00 am on 1 June, 2023",
        "session_10": [{"speaker": "Melanie", "dia_id": "D10:1", "text": "Back from the lake!"}],
        "session_2_date_time": "1:56 pm on 8 May, 2023",
        "session_2": [
            {"speaker": "Caroline", "dia_id": "D2:1", "text": "I went to a support group."},
            {"speaker": "Melanie", "dia_id": "D2:2", "text": "Look at this.", "img_url": ["u"], "blip_caption": "a sunset"},
        ],
    },
    "qa": [],
}]


def test_locomo_sessions_in_numeric_order_with_their_dates(tmp_path: Path) -> None:
    path = tmp_path / "locomo.json"
    path.write_bytes(orjson.dumps(LOCOMO))
    source = open_source(str(path))
    assert isinstance(source, LoCoMoSource)
    messages = list(source.messages())
    assert [m.id for m in messages] == ["conv-7:D2:1", "conv-7:D2:2", "conv-7:D10:1"]
    may8 = session_start_ms("1:56 pm on 8 May, 2023")
    assert may8 == 1_683_554_160_000
    assert [m.created_at for m in messages] == [may8, may8 + 30_000, session_start_ms("9:00 am on 1 June, 2023")]
    assert [m.role for m in messages] == ["user", "assistant", "assistant"]
    assert {m.thread_id for m in messages} == {m.resource_id for m in messages} == {"locomo-conv-7"}
    assert messages[0].parts == [TextPart(text="Caroline: I went to a support group.")]
    assert messages[1].parts == [TextPart(text="Melanie: Look at this. [shares a photo: a sunset]")]
    assert messages[2].metadata == {"speaker": "Melanie", "dia_id": "D10:1", "session": 10}


def test_locomo_unknown_speaker_and_bad_date_are_refused(tmp_path: Path) -> None:
    bad = orjson.loads(orjson.dumps(LOCOMO))
    bad[0]["conversation"]["session_2"][0]["speaker"] = "Bob"
    path = tmp_path / "bad.json"
    path.write_bytes(orjson.dumps(bad))
    with pytest.raises(ReplayInputError, match="'Bob' is neither"):
        LoCoMoSource(path).count()
    with pytest.raises(ReplayInputError, match="not like"):
        session_start_ms("8th of May")


# -- JSONL and detection ---------------------------------------------------------------------------


def test_jsonl_reads_camel_case_and_names_the_bad_line(tmp_path: Path) -> None:
    good = {"id": "m1", "threadId": "t", "resourceId": "r", "role": "user", "createdAt": T0,
            "parts": [{"type": "text", "text": "hi"}]}
    path = tmp_path / "m.jsonl"
    path.write_bytes(orjson.dumps(good) + b"\n\n" + orjson.dumps({**good, "id": "m2"}) + b"\n")
    source = JsonlSource(path)
    assert source.count() == 2
    assert [m.id for m in source.messages()] == ["m1", "m2"]
    path.write_bytes(orjson.dumps(good) + b"\n" + orjson.dumps({**good, "role": "robot"}) + b"\n")
    with pytest.raises(ReplayInputError, match=r"m\.jsonl:2: role"):
        list(JsonlSource(path).messages())


def test_detection_by_scheme_extension_and_sqlite_header(tmp_path: Path) -> None:
    assert detect_format("postgresql://u:p@h/db") == "mastra-postgres"
    assert detect_format("x.jsonl") == "jsonl"
    assert detect_format("x.json") == "locomo"
    db = sample_store(tmp_path / "store.bin", threads=1, per_thread=1)
    assert detect_format(f"file:{db}") == "mastra-sqlite"
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ReplayInputError, match="--format"):
        detect_format(str(tmp_path / "notes.txt"))


# -- checkpoint and resume -------------------------------------------------------------------------


def test_checkpoint_resumes_only_an_unchanged_source(tmp_path: Path) -> None:
    file = CheckpointFile(tmp_path / "cp" / "checkpoints.json")
    assert file.load("k", "f1") == Progress("f1", 0, False)
    file.save("k", Progress("f1", 40))
    file.save("other", Progress("f9", 3, True))
    assert file.load("k", "f1") == Progress("f1", 40, False)
    assert file.load("k", "f2") == Progress("f2", 0, False)  # source edited: start over
    assert file.load("other", "f9").completed
    (tmp_path / "cp" / "checkpoints.json").write_text("{broken")
    with pytest.raises(ValueError, match="delete it to start over"):
        file.load("k", "f1")


def test_pacing_spreads_sends_over_time() -> None:
    assert pacing_delay(0, 10.0, 0.0) == 0.0
    assert pacing_delay(50, 10.0, 2.0) == pytest.approx(3.0)
    assert pacing_delay(50, 10.0, 9.0) == 0.0
    assert pacing_delay(10_000, None, 0.0) == 0.0
    assert batch_size(ReplayOptions(rate=10.0, batch=500)) == 2
    assert batch_size(ReplayOptions(rate=0.5)) == 1
    assert batch_size(ReplayOptions(batch=250)) == 250


class RecordingSender:
    """Stands in for OMClient's producing side only: records what would have been acknowledged."""

    def __init__(self) -> None:
        self.topics = Topics.for_prefix("unit")
        self.sent: list[str] = []

    async def send_many(self, messages: list[ChatMessage]) -> list[ChatMessage]:
        self.sent.extend(m.id for m in messages)
        return messages


async def test_interrupted_replay_resumes_after_the_last_acknowledged_batch(tmp_path: Path) -> None:
    source = MastraSQLiteSource(sample_store(tmp_path / "m.db", threads=3, per_thread=7))
    all_ids = [m.id for m in source.messages()]
    checkpoints, sender, counter = CheckpointFile(tmp_path / "cp.json"), RecordingSender(), get_counter()
    first = await replay(source, sender, checkpoints, counter, ReplayOptions(batch=4, stop_after=9))  # type: ignore[arg-type]
    assert (first.sent, first.completed) == (12, False)  # stops after the batch that reached 9
    second = await replay(source, sender, checkpoints, counter, ReplayOptions(batch=4))  # type: ignore[arg-type]
    assert (second.resumed_from, second.sent, second.completed) == (12, 9, True)
    assert sender.sent == all_ids  # every message exactly once, in source order
    assert (len(second.threads), second.messages, second.total) == (3, 21, 21)
    assert second.tokens == sum(counter.count_message(m) for m in source.messages())
    third = await replay(source, sender, checkpoints, counter, ReplayOptions(batch=4))  # type: ignore[arg-type]
    assert (third.sent, third.completed) == (0, True) and len(sender.sent) == 21
    again = await replay(source, sender, checkpoints, counter, ReplayOptions(batch=4, restart=True))  # type: ignore[arg-type]
    assert again.sent == 21 and sender.sent[21:] == all_ids


# -- Mastra OM records (issue 22) -----------------------------------------------------------------

OM_STORE = Path(__file__).parents[1] / "fixtures" / "mastra_store" / "mastra-1.31.db"


def test_libsql_jsonb_thread_metadata_decodes_to_mastras_om_metadata() -> None:
    from streams.replay.sqlite_jsonb import JsonbError, decode_jsonb

    blob = sqlite3.connect(OM_STORE).execute("SELECT metadata FROM mastra_threads").fetchone()[0]
    assert isinstance(blob, bytes)  # LibSQL wrote jsonb(?), which older SQLites cannot read as JSON
    metadata = decode_jsonb(blob)
    assert metadata["workingMemory"].startswith("# User\n- Name: Ada")
    assert metadata["mastra"]["om"]["currentTask"].startswith("Helping the user plan")
    assert decode_jsonb(bytes([0x3B, 0x13, ord("7"), 0x01])) == [7, True]  # array of INT "7" and TRUE
    with pytest.raises(JsonbError):
        decode_jsonb(bytes([0x2B, 0x13]))  # an array claiming two payload bytes, holding one


def test_an_om_table_without_a_required_column_is_refused_naming_it(tmp_path: Path) -> None:
    copy = tmp_path / "old.db"
    copy.write_bytes(OM_STORE.read_bytes())
    with sqlite3.connect(copy) as db:
        db.execute('ALTER TABLE mastra_observational_memory DROP COLUMN "generationCount"')
    with pytest.raises(ReplayInputError, match="no column 'generationCount'.*@mastra/core 1.2.0.*@mastra/core 1.71.0"):
        list(MastraSQLiteSource(copy).imports(ImportTally()))
    assert MastraSQLiteSource(copy, import_om=False).count() == 66  # --messages-only still works


def test_the_earlier_generations_of_a_four_generation_store_are_imported_as_history_oldest_first() -> None:
    fixture = mastra_import.expected("mastra-1.31-generations")
    [part] = MastraSQLiteSource(mastra_import.FIXTURES / "mastra-1.31-generations.db").imports(ImportTally())
    assert part.record is not None and part.record.generation == fixture["generationCount"] == 3
    assert part.record.active_observations == fixture["activeObservations"]
    assert [(g.generation, g.origin_type, g.observation_token_count) for g in part.record.history] == [
        (g["generationCount"], g["originType"], g["observationTokenCount"]) for g in fixture["generations"][:-1]]


# the columns @mastra/core 1.3.0 added to the OM table (async buffering) and 1.9.0's metadata: without
# them the table is as @mastra/core 1.2.0, the first release with observational memory, created it
ADDED_AFTER_1_2 = ("bufferedObservations", "bufferedObservationTokens", "bufferedMessageIds", "bufferedReflection",
                   "bufferedReflectionTokens", "bufferedReflectionInputTokens", "reflectedObservationLineCount",
                   "bufferedObservationChunks", "isBufferingObservation", "isBufferingReflection",
                   "lastBufferedAtTokens", "lastBufferedAtTime", "metadata")


def test_a_store_from_before_mastra_core_1_3_imports_with_nothing_buffered_and_says_which_columns(
        tmp_path: Path) -> None:
    old = tmp_path / "core-1.2.db"
    old.write_bytes(OM_STORE.read_bytes())
    with sqlite3.connect(old) as db:
        for column in ADDED_AFTER_1_2:
            db.execute(f'ALTER TABLE mastra_observational_memory DROP COLUMN "{column}"')
    tally = ImportTally()
    [part] = MastraSQLiteSource(old).imports(tally)
    [today] = MastraSQLiteSource(OM_STORE).imports(ImportTally())
    assert part.record is not None and today.record is not None and today.record.buffered_chunks
    assert (part.record.active_observations, part.record.generation, part.record.last_observed_at) == (
        today.record.active_observations, today.record.generation, today.record.last_observed_at)
    assert part.record.buffered_chunks == () and part.record.buffered_reflection is None
    assert [m.id for m in part.unobserved] == [m.id for m in today.unobserved]  # the chunks' messages wait
    [note] = [reason for reason in tally.skipped if "absent" in reason]
    assert "@mastra/core 1.3.0" in note and "bufferedObservationChunks" in note and "metadata" not in note
    assert tally.skipped[note] == 1 and (tally.chunks, tally.buffered_reflections) == (0, 0)


async def test_dry_run_reports_the_import_per_kind_and_sends_nothing(tmp_path: Path) -> None:
    checkpoints = CheckpointFile(tmp_path / "cp.json")
    summary = await replay(MastraSQLiteSource(OM_STORE), None, checkpoints, get_counter(), ReplayOptions(dry_run=True))
    tally = summary.imports
    assert tally is not None and summary.sent == 0 and summary.completed
    assert (tally.records, tally.generations, tally.chunks, tally.buffered_reflections) == (1, 2, 1, 1)
    assert (tally.titles, tally.hints, tally.working_memory) == (1, 1, 1)
    assert (tally.observed_messages, tally.unobserved_messages, summary.total) == (42, 3, 45)
    assert dict(tally.skipped) == {
        "working-memory state signals (Mastra bookkeeping; the working memory is imported)": 21}
    assert not (tmp_path / "cp.json").exists()


def test_a_messages_table_without_resource_id_takes_the_thread_s_owner_and_one_without_content_is_refused(
    tmp_path: Path
) -> None:
    """Issue 22: older stores' messages table (no "resourceId") is handled; a missing required column is named."""
    db = build_store(tmp_path / "m.db", {"th": "owner"}, [
        {"id": "m1", "thread_id": "th", "role": "user", "created_at": T0, "content": text_content("a")},
        {"id": "m2", "thread_id": "th", "role": "assistant", "created_at": T0 + 1, "content": text_content("b")}])
    with sqlite3.connect(db) as conn:
        conn.execute('ALTER TABLE mastra_messages DROP COLUMN "resourceId"')
    assert [(m.id, m.resource_id) for m in MastraSQLiteSource(db).messages()] == [("m1", "owner"), ("m2", "owner")]
    with sqlite3.connect(db) as conn:
        conn.execute('ALTER TABLE mastra_messages DROP COLUMN "content"')
    with pytest.raises(ReplayInputError, match="mastra_messages has no column 'content'"):
        list(MastraSQLiteSource(db).messages())
