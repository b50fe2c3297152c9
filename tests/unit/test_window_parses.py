"""streams/sink/window_parses.py: a recorded column's parse is served by identity, as a copy, bounded."""

import threading

import orjson

from streams.sink.window_parses import WindowParses
from streams.sink.window_texts import Windows


def _column(thread: str, n: int) -> tuple[str, Windows]:
    windows = Windows({thread: [{"id": f"m{i}", "created_at": i, "parts": [{"type": "text", "text": "x" * 10}]}
                                for i in range(n)]}, {}, threading.Lock())
    return windows.column(), windows


def test_a_recorded_column_is_served_from_memory_and_equals_its_parse(monkeypatch) -> None:
    parses = WindowParses()
    column, windows = _column("t", 3)
    parses.record(column, windows)
    monkeypatch.setattr(orjson, "loads", lambda _: (_ for _ in ()).throw(AssertionError("parsed again")))
    served = parses.parsed(column)
    assert served.lists == windows.lists and served.texts == windows.texts and parses.hits == 1


def test_the_same_text_in_another_string_is_parsed_not_looked_up() -> None:
    parses = WindowParses()
    column, windows = _column("t", 3)
    parses.record(column, windows)
    other = "".join(list(column))  # equal text, another object
    assert other == column and other is not column
    assert parses.parsed(other).lists == windows.lists and not parses.parsed(other).texts and parses.hits == 0


def test_a_caller_changing_its_windows_does_not_change_the_memory() -> None:
    parses = WindowParses()
    column, windows = _column("t", 2)
    parses.record(column, windows)
    mine = parses.parsed(column)
    mine.lists["t"] = []
    mine.lists["u"] = [{"id": "x"}]
    mine.texts.clear()
    again = parses.parsed(column)
    assert again.lists == orjson.loads(column) and again.column() == column


def test_bounded_by_characters_least_recently_used_dropped_first() -> None:
    first, second, third = (_column(t, 5) for t in "abc")
    parses = WindowParses(max_chars=len(first[0]) + len(second[0]) + len(third[0]) - 1)
    parses.record(*first)
    parses.record(*second)
    parses.parsed(first[0])  # first is now the most recently used
    parses.record(*third)  # over the bound: second goes
    hits = parses.hits
    parses.parsed(second[0])
    assert parses.hits == hits
    parses.parsed(first[0])
    parses.parsed(third[0])
    assert parses.hits == hits + 2
    too_big = WindowParses(max_chars=10)
    too_big.record(*first)
    too_big.parsed(first[0])
    assert too_big.hits == 0


def test_a_column_brought_forward_leaves_when_its_successor_is_recorded() -> None:
    first, other = _column("a", 5), _column("b", 5)
    parses = WindowParses(max_chars=3 * len(first[0]) + 100)  # three of these columns, not four
    parses.record(*first)
    parses.record(*other)
    later = parses.parsed(first[0])
    assert later.append("a", [{"id": "m9", "created_at": 99, "parts": []}], ["m9"])
    successor = later.column()
    parses.record(successor, later, replaces=first[0])
    hits = parses.hits
    parses.parsed(first[0])
    assert parses.hits == hits  # the replaced column is gone
    third = _column("c", 5)
    parses.record(*third)  # fits beside the other two only because the replaced one left
    for column in (other[0], successor, third[0]):
        parses.parsed(column)
    assert parses.hits == hits + 3
