"""Which values the sink's inline insert takes (streams/sink/inline_values.py): exactly those of the
Python type their column expects that fit it; anything else goes the Native way."""

from __future__ import annotations

import math

import pytest

from streams.sink.inline_values import column_check, row_check


@pytest.mark.parametrize(("name", "fits", "refused"), [
    ("UInt32", [0, (1 << 32) - 1], [-1, 1 << 32, True, 1.0, "1", None]),
    ("UInt64", [0, 1 << 63, (1 << 64) - 1], [-1, 1 << 64]),
    ("Int64", [-(1 << 63), (1 << 63) - 1], [-(1 << 63) - 1, 1 << 63]),
    ("UInt8", [0, 255], [256, False]),
    ("UInt16", [65_535], [65_536]),
    ("String", ["", "é🧠\x00"], [b"x", 1, None]),
    ("LowCardinality(String)", ["user"], [None]),
    ("Nullable(String)", [None, "x"], [1]),
    ("Nullable(Int64)", [None, -5], [1 << 63]),
    ("Array(String)", [[], ["a", "b"]], [("a",), ["a", 1], "a"]),
    ("Map(String, String)", [{}, {"k": "v"}], [{"k": 1}, {1: "v"}, [("k", "v")]]),
    ("Nullable(Float64)", [None, 0.1, -0.0, 5e-324, 3, 1 << 53], [math.nan, math.inf, (1 << 53) + 1, "1.0"]),
])
def test_a_column_takes_values_of_its_type_that_fit(name: str, fits: list, refused: list) -> None:
    check = column_check(name)
    assert check is not None
    assert all(check(value) for value in fits)
    assert not any(check(value) for value in refused)


def test_a_type_without_a_check_sends_its_table_the_native_way() -> None:
    assert column_check("UUID") is None and column_check("Array(Float32)") is None
    assert row_check(["String", "UUID"]) is None


def test_a_row_is_checked_whole_and_by_width() -> None:
    check = row_check(["String", "UInt64"])
    assert check is not None
    assert check(["a", 1]) and not check(["a", -1]) and not check(["a"]) and not check(["a", 1, 2])
