"""streams/sink/head_versions.py: a head column's (generation, version), parsed once per column object."""

from __future__ import annotations

import orjson

from streams.sink.head_versions import NONE, HeadVersions


def _head(generation: int, version: int, log: str = "x") -> str:
    return orjson.dumps({"generation": generation, "version": version, "active_observations": log}).decode()


def test_a_column_stands_where_parsing_says_and_none_has_no_head() -> None:
    heads = HeadVersions()
    assert heads.of(None) == NONE
    assert heads.of(_head(2, 17)) == (2, 17)


def test_a_remembered_column_is_found_by_identity_not_by_text() -> None:
    heads = HeadVersions()
    made = _head(1, 5)
    heads.made(made, (9, 9))  # what a caller says it made is taken as the truth for that object
    assert heads.of(made) == (9, 9)
    same_text = "".join(list(made))  # an equal string, another object: parsed
    assert same_text is not made and heads.of(same_text) == (1, 5)


def test_the_memory_is_bounded_by_characters_least_recently_used_first() -> None:
    heads = HeadVersions(max_chars=3 * len(_head(0, 0, "a" * 100)))
    columns = [_head(0, i, "a" * 100) for i in range(4)]
    for i, column in enumerate(columns):
        heads.made(column, (7, i))
    assert heads.of(columns[0]) == (0, 0), "the oldest was dropped: parsed again"
    assert [heads.of(c) for c in columns[2:]] == [(7, 2), (7, 3)]
