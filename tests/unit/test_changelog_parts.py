"""Collections as per-item changelog records (streams/changelog_parts.py): maps, chains and blocks read
back exactly as written, and a change writes in proportion to itself."""

from __future__ import annotations

import random
from operator import itemgetter
from pathlib import Path

import pytest

from streams.changelog_parts import (BLOCK, Part, blocks, chain_head, chain_parts, map_parts, read_blocks,
                                     read_chain, read_map)
from streams.state_store import PartStore, open_parts

PREFIX = "\x00z\x00thread:t\x00"
Item = tuple[str, str]
ident, encode = itemgetter(0), lambda item: item[1].encode()


@pytest.fixture
def parts(tmp_path: Path) -> PartStore:
    return open_parts(tmp_path)


def _put(parts: PartStore, written: list[Part]) -> list[Part]:
    for key, value in written:
        parts.put(key, value)
    return written


def _chain(parts: PartStore, before: list[Item], after: list[Item], **kwargs) -> list[Part]:
    written = _put(parts, chain_parts(PREFIX, tuple(before), tuple(after), ident, encode, **kwargs))
    assert read_chain(parts, PREFIX, chain_head(after, ident)) == [(i, v.encode()) for i, v in after]
    return written


def _edit(rng: random.Random, items: list[Item], n: int) -> list[Item]:
    """One of the changes a collection sees: added at either end or inside, dropped from anywhere,
    a value changed, an item moved."""
    items = list(items)
    op = rng.choice(["append", "append", "prepend", "insert", "drop-front", "drop-back", "remove", "change", "move"])
    if op in ("prepend", "insert", "append") or not items:
        at = {"prepend": 0, "insert": rng.randint(0, len(items)), "append": len(items)}[op if items else "append"]
        items.insert(at, (f"i{n}", f"value {n}"))
    elif op == "drop-front":
        del items[:rng.randint(1, len(items))]
    elif op == "drop-back":
        del items[-rng.randint(1, len(items)):]
    elif op == "remove":
        del items[rng.randrange(len(items))]
    elif op == "change":
        at = rng.randrange(len(items))
        items[at] = (items[at][0], f"changed {n}")
    else:
        item = items.pop(rng.randrange(len(items)))
        items.insert(rng.randint(0, len(items)), item)
    return items


def test_a_chain_reads_back_in_order_after_any_sequence_of_changes(parts: PartStore):
    rng, items = random.Random(20), []
    for n in range(600):
        after = _edit(rng, items, n)
        _chain(parts, items, after)
        items = after
        assert read_map(parts, PREFIX).keys() == {i for i, _ in items}, "no item outlives its place"


def test_appending_and_dropping_from_the_front_write_only_what_changed(parts: PartStore):
    items = [(f"i{n}", f"value {n}") for n in range(50)]
    assert len(_chain(parts, [], items)) == 50
    assert _chain(parts, items, [*items, ("new", "x")]) == [(PREFIX + "new", b"i49\nx")]
    written = _chain(parts, [*items, ("new", "x")], [*items[20:], ("new", "x")])
    assert written == [(PREFIX + f"i{n}", None) for n in range(20)], "tombstones only"


def test_an_item_inserted_or_removed_inside_rewrites_its_successor_alone(parts: PartStore):
    items = [(f"i{n}", f"value {n}") for n in range(10)]
    _chain(parts, [], items)
    inserted = [*items[:5], ("new", "x"), *items[5:]]
    assert {k for k, _ in _chain(parts, items, inserted)} == {PREFIX + "new", PREFIX + "i5"}
    assert {k for k, _ in _chain(parts, inserted, items)} == {PREFIX + "new", PREFIX + "i5"}


def test_a_whole_write_writes_every_item_and_tombstones_the_ones_gone(parts: PartStore):
    before = [(f"i{n}", "v") for n in range(5)]
    after = [("i4", "v"), ("i9", "w")]
    written = _chain(parts, before, after, whole=True)
    assert sorted(k for k, v in written if v is not None) == [PREFIX + "i4", PREFIX + "i9"]
    assert sorted(k for k, v in written if v is None) == [PREFIX + f"i{n}" for n in range(4)]


def test_a_changed_encoding_of_an_unchanged_item_is_written_again(parts: PartStore):
    items = [(f"i{n}", "v") for n in range(5)]
    _chain(parts, [], items)
    written = chain_parts(PREFIX, tuple(items), tuple(items), ident, lambda i: b"again", dirty={"i2"})
    assert written == [(PREFIX + "i2", b"i1\nagain")]


def test_a_missing_item_is_reported_and_the_rest_read(parts: PartStore, caplog: pytest.LogCaptureFixture):
    items = [(f"i{n}", "v") for n in range(5)]
    _chain(parts, [], items)
    parts.put(PREFIX + "i2", None)
    assert [i for i, _ in read_chain(parts, PREFIX, chain_head(items, ident))] == ["i3", "i4"]
    assert "om.recovery.missing_parts" in caplog.text


def test_a_map_writes_changed_values_and_tombstones_removed_keys(parts: PartStore):
    before, after = {"a": 1, "b": 2, "c": 3}, {"b": 2, "c": 4, "d": 5}
    _put(parts, map_parts(PREFIX, {}, before, b"%d".__mod__))
    written = _put(parts, map_parts(PREFIX, before, after, b"%d".__mod__))
    assert sorted(written) == sorted([(PREFIX + "a", None), (PREFIX + "c", b"4"), (PREFIX + "d", b"5")])
    assert read_map(parts, PREFIX) == {"b": b"2", "c": b"4", "d": b"5"}


def test_blocks_read_back_any_text_and_an_append_writes_its_last_block_and_the_new_ones(parts: PartStore):
    rng, text = random.Random(7), b""
    for n in range(300):
        if rng.random() < 0.8:
            new = text + f"é🙂 observation {n} ".encode() * rng.randint(1, 200)  # multi-byte characters cut too
        else:
            new = text[:rng.randint(0, len(text))] if rng.random() < 0.5 else b"reflected " * rng.randint(0, 400)
        written = _put(parts, blocks(PREFIX, text, new))
        assert read_blocks(parts, PREFIX, len(new)) == new
        if new.startswith(text):
            assert sum(len(v or b"") for _, v in written) <= len(new) - len(text) + BLOCK
        text = new
    assert read_map(parts, PREFIX).keys() == {str(n) for n in range(-(-len(text) // BLOCK))}, "no block past the end"
