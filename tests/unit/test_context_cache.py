"""Issue 19 item 1: the reader's context-row cache never serves a row older than one written.

The sink hands the cache every row it inserts; fetched rows race with those writes (a query may
return just before or after an insert), and the cache must end up serving the newest row or none.
"""

from __future__ import annotations

import orjson

from streams.reader.context_cache import ContextCache, key_hash
from streams.reader.context_row import decode_context_row


def raw(version: int, resource: str = "r", observations: str = "") -> list:
    """An ``om_contexts`` row as the sink inserts it."""
    head = {"generation": 0, "version": version, "active_observations": observations, "timezone": "UTC",
            "threads": {}, "last_observed_at": None}
    return ["thread:t", resource, orjson.dumps(head).decode(), None, None, 0, 0, "{}", ["t"], ["t"], version]


def rows(*raws: list) -> dict:
    return {r[1]: decode_context_row(r) for r in raws}


def test_a_written_row_updates_the_entry_an_agent_is_reading() -> None:
    cache = ContextCache()
    cache.put("thread:t", rows(raw(5)))
    cache.written([raw(7, observations="new")])
    held = cache.get("thread:t")
    assert held is not None and held["r"].version == 7 and held["r"].head.active_observations == "new"


def test_a_fetch_that_lost_the_race_with_a_write_is_not_kept() -> None:
    cache = ContextCache()
    cache.written([raw(7)])  # inserted while the query that returns version 5 was in flight
    cache.put("thread:t", rows(raw(5)))
    assert cache.get("thread:t") is None
    cache.put("thread:t", rows(raw(7)))
    assert cache.get("thread:t")["r"].version == 7


def test_an_older_fetch_never_replaces_a_newer_entry() -> None:
    cache = ContextCache()
    cache.put("thread:t", rows(raw(7)))
    cache.put("thread:t", rows(raw(5)))
    assert cache.get("thread:t")["r"].version == 7


def test_a_write_for_another_resource_joins_the_entry_of_the_key() -> None:
    cache = ContextCache()
    cache.put("thread:t", rows(raw(5)))
    cache.written([raw(6, resource="r-other")])
    held = cache.get("thread:t")
    assert held is not None and set(held) == {"r", "r-other"}


def test_the_least_recently_read_key_goes_first() -> None:
    cache = ContextCache(capacity=2)
    for key in ("thread:a", "thread:b"):
        cache.put(key, {})
    assert cache.get("thread:a") == {}
    cache.put("thread:c", {})
    assert cache.get("thread:b") is None and cache.get("thread:a") == {} and cache.get("thread:c") == {}


def test_a_row_announced_before_its_insert_is_served_to_a_fetch_that_finds_the_table_behind() -> None:
    cache = ContextCache()
    cache.landing([raw(7, observations="new")])  # not held: it waits beside the entries
    served = cache.put("thread:t", rows(raw(5, observations="old"), raw(3, resource="other")))
    assert served["r"].version == 7 and served["other"].version == 3, "the table's other rows stay"
    assert cache.get("thread:t")["r"].head.active_observations == "new", "and the merged rows are kept"


def test_an_announced_row_leaves_once_inserted_and_with_its_write_withdrawn() -> None:
    cache = ContextCache()
    cache.landing([raw(7)])
    cache.landing([raw(8, resource="other")])
    cache.written([raw(7)])  # inserted: the table has it now, and the cache no longer keeps it aside
    assert cache._landing == {"thread:t": {"other": raw(8, resource="other")}}, "only what is still to be inserted"
    withdrawn = ContextCache()
    withdrawn.landing([raw(9)])
    withdrawn.forget(["thread:t"])  # the write failed: the tables decide again
    served = withdrawn.put("thread:t", rows(raw(5)))
    assert served["r"].version == 5 and withdrawn.get("thread:t") is None, "served, not kept: 9 was announced"


def test_a_key_the_table_never_held_has_no_rows_once_the_tables_keys_are_known() -> None:
    cache = ContextCache()
    assert cache.get("thread:new") is None, "the table's keys unknown yet: the read queries"
    cache.know_stored([key_hash("thread:t"), key_hash("thread:other")])
    assert cache.get("thread:new") == {}, "never stored, never written: no rows, no query"
    assert cache.get("thread:t") is None, "held by the table: queried"


def test_a_key_written_or_announced_since_is_never_taken_for_one_without_rows() -> None:
    late = ContextCache()
    late.written([raw(3)])  # inserted after the cache began, and missed by the read of the table's keys
    late.know_stored([])
    assert late.get("thread:t") is None
    announced = ContextCache()
    announced.know_stored([])
    announced.landing([raw(7)])  # not inserted yet
    assert announced.get("thread:t") is None
    served = announced.put("thread:t", {})
    assert served["r"].version == 7, "the query that found the table behind is served the announced row"


def test_a_first_reads_empty_entry_takes_the_keys_first_rows() -> None:
    cache = ContextCache()
    cache.know_stored([])
    assert cache.get("thread:t") == {}
    cache.landing([raw(7, observations="first")])
    held = cache.get("thread:t")
    assert held is not None and held["r"].version == 7 and held["r"].head.active_observations == "first"
    cache.written([raw(7, observations="first")])
    assert cache.get("thread:t")["r"].version == 7
