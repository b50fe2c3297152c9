"""streams/reader/fold_memory.py: a key's folds are loaded once, kept by what the sink tells (also
while the load runs), and bounded."""

from __future__ import annotations

import asyncio

from streams.reader.fold_memory import FoldMemory


class Tables:
    """The folds stored per key; a load can be held to tell the memory something while it runs."""

    def __init__(self) -> None:
        self.folds: dict[tuple[str, str], set[str]] = {}
        self.loads: list[tuple[str, str]] = []
        self.hold: asyncio.Event | None = None
        self.reading = asyncio.Event()

    async def load(self, key: tuple[str, str]) -> frozenset[str]:
        self.loads.append(key)
        found = frozenset(self.folds.get(key, ()))  # what the query reads
        self.reading.set()
        if self.hold is not None:
            await self.hold.wait()
        return found


async def test_a_key_is_loaded_once_then_kept_by_what_the_sink_tells() -> None:
    tables, memory = Tables(), FoldMemory()
    tables.folds[("r", "k")] = {"m1"}
    assert await memory.folded(("r", "k"), "m1", tables.load)
    assert not await memory.folded(("r", "k"), "m2", tables.load)
    memory.told([("r", "k", "m2"), ("r", "other", "m9")])
    assert await memory.folded(("r", "k"), "m2", tables.load)
    assert tables.loads == [("r", "k")], "a held key asks nothing"
    assert not await memory.folded(("r", "other"), "m9", tables.load), "a key not held was loaded whole"


async def test_a_fold_told_while_the_key_loads_is_not_lost() -> None:
    tables, memory = Tables(), FoldMemory()
    tables.hold = asyncio.Event()
    looking = asyncio.create_task(memory.folded(("r", "k"), "m1", tables.load))
    await asyncio.wait_for(tables.reading.wait(), 5)  # the query has read the tables: m1 was not there
    memory.told([("r", "k", "m1")])  # stored and told after the read, before the key is held
    tables.hold.set()
    assert await looking
    assert await memory.folded(("r", "k"), "m1", tables.load)
    assert tables.loads == [("r", "k")]


async def test_two_first_looks_on_one_key_both_keep_what_was_told() -> None:
    tables, memory = Tables(), FoldMemory()
    tables.hold = asyncio.Event()
    first = asyncio.create_task(memory.folded(("r", "k"), "m1", tables.load))
    second = asyncio.create_task(memory.folded(("r", "k"), "m2", tables.load))
    while len(tables.loads) < 2:
        await asyncio.sleep(0)
    memory.told([("r", "k", "m1"), ("r", "k", "m2")])
    tables.hold.set()
    assert await first and await second
    assert await memory.folded(("r", "k"), "m2", tables.load) and len(tables.loads) == 2


async def test_the_memory_is_bounded_least_recently_asked_key_first() -> None:
    tables, memory = Tables(), FoldMemory(max_ids=4)
    for key in "abc":
        tables.folds[("r", key)] = {f"{key}1", f"{key}2"}
        assert await memory.folded(("r", key), f"{key}1", tables.load)
    assert tables.loads == [("r", "a"), ("r", "b"), ("r", "c")]
    assert await memory.folded(("r", "c"), "c2", tables.load) and await memory.folded(("r", "b"), "b2", tables.load)
    assert len(tables.loads) == 3, "the two asked last are held"
    assert await memory.folded(("r", "a"), "a2", tables.load)
    assert len(tables.loads) == 4, "the first was dropped, and is loaded whole again"
