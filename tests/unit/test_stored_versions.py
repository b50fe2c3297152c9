"""streams/sink/stored_versions.py: a unit is loaded once, with the batches being written, then kept
current by the batches started; nothing learned under a dropped memory is kept; bounded."""

from __future__ import annotations

from typing import Any

from streams.sink.row_cache import RowCache
from streams.sink.rows import MESSAGE_COLUMNS, OBSERVATION_COLUMNS
from streams.sink.stored_versions import StoredVersions


class Tables:
    """The three tables the load reads, answering its query as ClickHouse would."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, str, str, int]] = []  # resource, thread, id, version
        self.observations: list[tuple[str, str, int]] = []  # lookup key, message id, version
        self.deleted: set[tuple[str, str]] = set()
        self.asked: list[dict[str, Any]] = []

    def query(self, _sql: str, parameters: dict[str, Any]) -> Any:
        self.asked.append(parameters)
        threads, keys = set(map(tuple, parameters["threads"])), set(parameters["lookup_keys"])
        versions: dict[tuple[str, str, str], set[int]] = {}
        for resource, thread, ident, version in self.messages:
            if (resource, thread) in threads:
                versions.setdefault((resource, thread, ident), set()).add(version)
        newest: dict[tuple[str, str], int] = {}
        for key, ident, version in self.observations:
            if key in keys:
                newest[key, ident] = max(version, newest.get((key, ident), version))
        rows = [("versions", *ident, sorted(found)) for ident, found in versions.items()]
        rows += [("observed", "", key, ident, [version]) for (key, ident), version in newest.items()]
        rows += [("deleted", *key, "", []) for key in self.deleted if list(key) in map(list, parameters["keys"])]
        return type("Result", (), {"result_rows": rows})()


def message(resource: str, thread: str, ident: str, version: int) -> list[Any]:
    row: list[Any] = [None] * len(MESSAGE_COLUMNS)
    for column, value in (("resource_id", resource), ("thread_id", thread), ("id", ident), ("lookup_key", thread),
                          ("version", version)):
        row[MESSAGE_COLUMNS.index(column)] = value
    return row


def observation(key: str, ident: str, version: int) -> list[Any]:
    row: list[Any] = [None] * len(OBSERVATION_COLUMNS)
    for column, value in (("lookup_key", key), ("message_id", ident), ("version", version)):
        row[OBSERVATION_COLUMNS.index(column)] = value
    return row


def ask(memory: StoredVersions, tables: Tables, behind: dict | None = None, epoch: int | None = None,
        threads=(("r", "t"),), lookup_keys=("t",), keys=(("r", "t"),)):
    epoch = memory.epoch if epoch is None else epoch
    return memory.known(tables, set(threads), set(lookup_keys), set(keys), behind or {}, epoch)  # type: ignore[arg-type]


def test_a_unit_is_loaded_once_then_kept_current_by_the_batches_started() -> None:
    tables, memory = Tables(), StoredVersions()
    tables.messages.append(("r", "t", "m1", 2))
    tables.observations.append(("t", "m0", 7))
    known = ask(memory, tables)
    assert known.versions[("r", "t")] == {"m1": (2,)} and known.observed["t"] == {"m0": 7}
    memory.learn({"om_messages": [message("r", "t", "m2", 4), message("r", "t", "m1", 9)],
                  "om_message_observations": [observation("t", "m1", 8), observation("t", "m0", 5)]}, memory.epoch)
    known = ask(memory, tables)
    assert len(tables.asked) == 1, "a held unit is answered from memory"
    assert known.versions[("r", "t")] == {"m1": (2, 9), "m2": (4,)}
    assert known.observed["t"] == {"m0": 7, "m1": 8}, "the newest observation version of each id"
    ask(memory, tables, threads=[("r", "t"), ("r", "u")], lookup_keys=["t", "u"], keys=[("r", "t")])
    assert len(tables.asked) == 2 and tables.asked[1] == {"threads": [("r", "u")], "lookup_keys": ["u"], "keys": []}


def test_the_batches_being_written_count_as_stored_when_a_unit_is_loaded_and_after() -> None:
    tables, memory = Tables(), StoredVersions()
    behind = {"om_messages": [message("r", "t", "m1", 2)], "om_message_observations": [observation("t", "m1", 3)]}
    assert ask(memory, tables, behind).versions[("r", "t")] == {"m1": (2,)}
    # the batch landed (or not yet): the next start has nothing behind, and still counts its rows
    known = ask(memory, tables)
    assert known.versions[("r", "t")] == {"m1": (2,)} and known.observed["t"] == {"m1": 3}


def test_a_unit_not_held_learns_nothing_and_is_loaded_whole_when_asked() -> None:
    tables, memory = Tables(), StoredVersions()
    memory.learn({"om_messages": [message("r", "t", "m1", 2)]}, memory.epoch)
    tables.messages.append(("r", "t", "m1", 2))
    tables.messages.append(("r", "t", "m0", 1))
    assert ask(memory, tables).versions[("r", "t")] == {"m0": (1,), "m1": (2,)}


def test_nothing_learned_or_loaded_under_a_dropped_memory_is_kept() -> None:
    tables, memory = Tables(), StoredVersions()
    old = memory.epoch
    memory.clear()  # a write failed, or partitions were revoked
    tables.messages.append(("r", "t", "m1", 2))
    assert ask(memory, tables, epoch=old).versions[("r", "t")] == {"m1": (2,)}, "answered all the same"
    ask(memory, tables, epoch=old)
    assert len(tables.asked) == 2, "but not kept"
    ask(memory, tables)
    memory.learn({"om_messages": [message("r", "t", "m2", 4)]}, old)
    assert ask(memory, tables).versions[("r", "t")] == {"m1": (2,)}, "a start under the old memory learns nothing"


def test_a_deletion_or_a_forgotten_row_cache_drops_it_all() -> None:
    tables, memory = Tables(), StoredVersions()
    tables.deleted.add(("r", "t"))
    assert ask(memory, tables).deleted == {("r", "t")}
    memory.learn({"om_deleted_keys": [["r", "t"]]}, memory.epoch)
    ask(memory, tables)
    assert len(tables.asked) == 2
    cache = RowCache()
    pinned = cache.pinned()
    pinned.versions(tables, {})({("r", "t")}, {"t"}, {("r", "t")})  # type: ignore[arg-type]
    cache.forget([("r", "t")])  # a deleted key
    pinned.versions(tables, {})({("r", "t")}, {"t"}, {("r", "t")})  # type: ignore[arg-type]
    assert len(tables.asked) == 4
    cache.pinned().versions(tables, {})({("r", "t")}, {"t"}, {("r", "t")})  # type: ignore[arg-type]
    cache.pinned().versions(tables, {})({("r", "t")}, {"t"}, {("r", "t")})  # type: ignore[arg-type]
    assert len(tables.asked) == 5, "a new write's memory is loaded once again"


def test_the_memory_is_bounded_least_recently_asked_unit_first() -> None:
    tables, memory = Tables(), StoredVersions(max_entries=8)
    for thread in "abc":
        tables.messages += [("r", thread, f"{thread}{i}", i) for i in range(3)]
    for thread in "abc":
        ask(memory, tables, threads=[("r", thread)], lookup_keys=[], keys=[])
    assert len(tables.asked) == 3
    ask(memory, tables, threads=[("r", "c")], lookup_keys=[], keys=[])
    ask(memory, tables, threads=[("r", "b")], lookup_keys=[], keys=[])
    assert len(tables.asked) == 3, "the two asked last are held"
    assert ask(memory, tables, threads=[("r", "a")], lookup_keys=[], keys=[]).versions[("r", "a")] == {
        "a0": (0,), "a1": (1,), "a2": (2,)}
    assert len(tables.asked) == 4, "the first was dropped, and is loaded whole again"
