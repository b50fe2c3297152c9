"""streams/reader/context_row.py: a row reuses the window messages the row it replaced decoded, only
where their JSON is the same, and gives what a fresh decode gives; a row of a column this process's
sink parsed shares that parse."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import orjson

from schemas.messages import ChatMessage
from streams.reader.context_cache import ContextCache
from streams.reader import context_row
from streams.reader.context_row import LastDecoded, decode_context_row
from streams.sink.window_parses import WindowParses
from streams.sink.window_texts import Windows


def _message(i: int, text: str = "") -> dict:
    return ChatMessage(id=f"m{i}", thread_id="t", resource_id="r", role="user" if i % 2 else "assistant",
                       created_at=1_733_000_000_000 + i, parts=[{"type": "text", "text": text or f"words {i}"}]
                       ).to_json_dict()


def _raw(version: int, window: list[dict], other: list[dict] | None = None) -> list:
    windows = {"t": window, **({"u": other} if other else {})}
    return ["thread:t", "r", None, None, None, 0, 0, orjson.dumps(windows).decode(), ["t"], ["t"], version]


def _fresh(raw: list, thread: str = "t") -> list[ChatMessage]:
    return decode_context_row(raw).window(thread)


def test_messages_with_the_same_json_are_the_ones_decoded_before() -> None:
    first = decode_context_row(_raw(1, [_message(1), _message(2)]))
    before = first.window("t")
    later_raw = _raw(2, [_message(1), _message(2), _message(3)])
    later = decode_context_row(later_raw)
    later.inherit(first)
    window = later.window("t")
    assert window == _fresh(later_raw)
    assert window[0] is before[0] and window[1] is before[1] and window[2] not in before


def test_a_message_whose_json_changed_is_decoded_again() -> None:
    first = decode_context_row(_raw(1, [_message(1), _message(2)]))
    first.window("t")
    edited_raw = _raw(2, [_message(1), _message(2, text="edited")])
    edited = decode_context_row(edited_raw)
    edited.inherit(first)
    window = edited.window("t")
    assert window == _fresh(edited_raw) and window[1].parts[0].text == "edited"


def test_a_row_never_read_passes_on_what_it_was_given_and_rows_do_not_chain() -> None:
    first = decode_context_row(_raw(1, [_message(1)], other=[_message(9)]))
    before, other = first.window("t"), first.window("u")
    unread = decode_context_row(_raw(2, [_message(1), _message(2)], other=[_message(9)]))
    unread.inherit(first)
    third_raw = _raw(3, [_message(1), _message(2), _message(3)], other=[_message(9)])
    third = decode_context_row(third_raw)
    third.inherit(unread)
    assert third.window("t")[0] is before[0] and third.window("u")[0] is other[0]
    assert third.window("t") == _fresh(third_raw) and third.window("u") == _fresh(third_raw, "u")
    assert all(not isinstance(value, type(first)) for pair in unread.__dict__.get("_carried", {}).values()
               for value in pair)


def test_the_cache_hands_a_newer_row_the_messages_its_entry_decoded() -> None:
    cache = ContextCache()
    cache.put("thread:t", {"r": decode_context_row(_raw(1, [_message(1)]))})
    before = cache.get("thread:t")["r"].window("t")
    cache.landing([_raw(2, [_message(1), _message(2)])])
    held = cache.get("thread:t")["r"]
    assert held.version == 2 and held.window("t")[0] is before[0] and len(held.window("t")) == 2


def test_rows_handed_one_after_another_inherit_and_an_older_one_changes_nothing() -> None:
    last = LastDecoded(max_chars=len(_raw(3, [_message(1), _message(2), _message(3)])[7]))
    first = last.decoded(_raw(1, [_message(1)]))
    before = first.window("t")
    second = last.decoded(_raw(2, [_message(1), _message(2)]))
    assert second.window("t")[0] is before[0]
    stale = last.decoded(_raw(1, [_message(1)]))  # a wait handed an older row late: decoded, not kept
    assert stale.window("t") == before and stale.window("t")[0] is not before[0]
    assert last.decoded(_raw(3, [_message(1), _message(2), _message(3)])).window("t")[1] is second.window("t")[1]
    other = ["thread:u", "r", None, None, None, 0, 0, orjson.dumps({"u": [_message(7)]}).decode(), ["u"], ["u"], 1]
    last.decoded(other)  # over the bound: the first key's row goes
    assert last.decoded(_raw(4, [_message(1)])).window("t")[0] is not before[0]


def _stored(i: int) -> dict:
    """A window entry as the sink reads a stored message back (streams/sink/context_appends.py
    ``_message_fields``), as plain JSON."""
    return {"id": f"m{i}", "thread_id": "t", "resource_id": "r", "role": "user", "created_at": 1_733_000_000_000 + i,
            "parts": [{"type": "text", "text": f"words {i}"}], "model": None, "metadata": {"turn": i} if i % 2 else None}


def _as_the_sink_keeps_it(message: dict) -> dict:
    """The same entry as the sink's parse holds it: parts and metadata as their stored JSON."""
    return {**message, "parts": orjson.Fragment(orjson.dumps(message["parts"])),
            "metadata": orjson.Fragment(orjson.dumps(message["metadata"])) if message["metadata"] else None}


def test_a_row_of_a_column_the_sink_parsed_shares_its_parse_and_decodes_the_same() -> None:
    parses = WindowParses()
    kept = [_as_the_sink_keeps_it(_stored(i)) for i in (1, 2)]
    windows = Windows({"t": kept}, {}, parses._parses.lock)
    column = windows.column()
    parses.record(column, windows)
    raw = _raw(1, [])
    raw[7] = column
    fresh = _raw(1, [_stored(1), _stored(2)])
    assert column == fresh[7]  # what the sink wrote is what orjson writes of the plain messages
    with _sharing(parses):
        row = decode_context_row(raw)
        assert row._windows["t"] is kept  # the sink's parse itself: no second parse of the column
        assert row.window("t") == _fresh(fresh)
        longer = Windows({"t": kept}, {"t": windows.texts["t"]}, parses._parses.lock)
        assert longer.append("t", [_as_the_sink_keeps_it(_stored(3))], ["m3"])
        later_column = longer.column()
        parses.record(later_column, longer, replaces=column)
        later_raw = _raw(2, [])
        later_raw[7] = later_column
        later = decode_context_row(later_raw)
        later.inherit(row)
        window = later.window("t")
    assert window[:2] == row.window("t") and window[0] is row.window("t")[0] and window[1] is row.window("t")[1]
    assert window == _fresh(_raw(2, [_stored(1), _stored(2), _stored(3)]))


def test_a_column_the_sink_did_not_record_is_parsed() -> None:
    raw = _raw(1, [_message(1)])
    with _sharing(WindowParses()):
        assert decode_context_row(raw).window("t") == _fresh(raw)


@contextlib.contextmanager
def _sharing(parses: WindowParses) -> Iterator[None]:
    """``parses`` as the process's sink's (the embedded worker's), for the reader's rows."""
    saved = context_row.PARSES
    context_row.PARSES = parses
    try:
        yield
    finally:
        context_row.PARSES = saved
