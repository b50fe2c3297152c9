"""The sink's memory of its context rows (streams/sink/row_cache.py)."""

from __future__ import annotations

from streams.sink.row_cache import RowCache


def row(key: str, resource: str = "r", windows: str = "{}", version: int = 1) -> list:
    return [key, resource, None, None, None, 0, 0, windows, [], [], version]


def test_the_last_inserted_row_is_remembered_and_handed_out_as_a_copy() -> None:
    cache = RowCache()
    cache.inserted([row("k", version=1)])
    cache.inserted([row("k", version=2)])
    first, missing = cache.get([("r", "k"), ("r", "other")])
    assert (first[-1], missing) == (2, None)
    first[-1] = 99
    assert cache.get([("r", "k")])[0][-1] == 2, "a caller's change never reaches the memory"


def test_a_write_under_way_when_everything_is_dropped_records_nothing() -> None:
    cache = RowCache()
    write = cache.pinned()
    cache.forget()  # partitions revoked meanwhile
    write.inserted([row("k")])
    assert cache.get([("r", "k")]) == [None]
    cache.pinned().inserted([row("k")])
    assert cache.get([("r", "k")])[0] is not None


def test_forgetting_keys_drops_only_those() -> None:
    cache = RowCache()
    cache.inserted([row("a"), row("b")])
    cache.forget([("r", "a")])
    assert [r is not None for r in cache.get([("r", "a"), ("r", "b")])] == [False, True]


def test_the_memory_is_bounded_by_bytes_least_recently_written_first() -> None:
    cache = RowCache(max_bytes=3 * (256 + len("k0") + len("r") + 1_000))  # three rows
    for n in range(5):
        cache.inserted([row(f"k{n}", windows="x" * 1_000)])
    assert [r is not None for r in cache.get([("r", f"k{n}") for n in range(5)])] == [False, False, True, True, True]
