"""recall(...) against the real ClickHouse engine (chDB), on the project's migrations.

Each test gets a database of its own on the session's engine (chDB hosts one data directory per
process, so the ``clickhouse_dsn`` engine is shared and isolation comes from databases).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from clickhouse_connect.driver.client import Client

from processors.recall import SEARCH_NOT_CONFIGURED
from streams.clickhouse import connect
from streams.embeddings import HashingEmbedder
from streams.minilm import MiniLMEmbedder
from streams.migrate import apply_migrations
from streams.reader.observation_vectors import index_observation_groups
from streams.reader.recall import NOT_IN_RESOURCE, recall

pytestmark = pytest.mark.integration

DAY = 86_400_000
T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z
HOSTILE_IDS = [
    "t-other",
    "x' OR '1'='1",
    "t1'); DROP TABLE om_messages; --",
    "{resource:String}",
    "t1\\' OR 1=1 --",
    "m-other",
]


@pytest.fixture
def client(clickhouse_dsn: str) -> Iterator[Client]:
    db = f"recall_{uuid.uuid4().hex[:10]}"
    ch = connect(f"{clickhouse_dsn}?database={db}")
    apply_migrations(ch)
    yield ch
    ch.command(f"DROP DATABASE IF EXISTS {db}")


def _ids(rendered: str) -> list[str]:
    """Message ids in the order their headers appear."""
    return re.findall(r"^\*\*.*\*\* \[(.+)\]:$", rendered, re.MULTILINE)


def _text(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


def _add(ch: Client, resource: str, thread: str, mid: str, at: int, parts: list[dict[str, Any]], role: str = "user") -> None:
    ch.insert(
        "om_messages",
        [[resource, thread, mid, f"resource:{resource}", role, at, orjson.dumps(parts).decode(), resource, 1]],
        column_names=["resource_id", "thread_id", "id", "lookup_key", "role", "created_at", "parts", "message_resource_id", "version"],
    )


def _title(ch: Client, resource: str, titles: dict[str, str]) -> None:
    ch.insert(
        "om_records",
        [[resource, f"resource:{resource}", 0, titles, 1]],
        column_names=["resource_id", "lookup_key", "generation", "thread_titles", "version"],
    )


def _conversation(ch: Client) -> None:
    """r1: thread t1 (m0…m9, a data-only message, two messages in one ms) and t2; r2: t-other."""
    for i in range(10):
        _add(ch, "r1", "t1", f"m{i}", T0 + i * 1_000, _text(f"t1 message {i}"), "user" if i % 2 == 0 else "assistant")
    _add(ch, "r1", "t1", "marker", T0 + 4_500, [{"type": "data-om-status", "data": {}}], "assistant")
    _add(ch, "r1", "t1", "m9b", T0 + 9_000, _text("same millisecond as m9"), "assistant")
    _add(ch, "r1", "t2", "n0", T0 + 3 * DAY, _text("second thread opening"))
    _add(ch, "r2", "t-other", "m-other", T0 + 1, _text("SECRET of another resource"))
    _title(ch, "r1", {"t1": "Setup", "t2": "Follow-up"})
    _title(ch, "r2", {"t-other": "SECRET title"})


def test_browsing_a_thread_from_either_end_skips_bookkeeping_messages(client: Client) -> None:
    _conversation(client)

    start = recall(client, "r1", {"threadId": "t1", "limit": 4})
    end = recall(client, "r1", {"threadId": "t1", "limit": 3, "anchor": "end"})
    default = recall(client, "r1", {"limit": 1}, current_thread_id="t1")

    assert start["cursor"] == "m0" and start["count"] == 4 and start["hasNextPage"] is True
    assert "marker" not in start["messages"] and "[m3]" in start["messages"]
    assert _ids(end["messages"]) == ["m9b", "m9", "m8"]
    assert end["hasPrevPage"] is True and end["hasNextPage"] is False
    assert default["messages"].startswith("No threadId was given, so this is the current thread t1.")


def test_paging_around_a_cursor_both_ways_without_losing_same_millisecond_messages(client: Client) -> None:
    _conversation(client)

    forward = recall(client, "r1", {"cursor": "m5", "limit": 3}, current_thread_id="t1")
    later = recall(client, "r1", {"cursor": "m5", "limit": 3, "page": 2}, current_thread_id="t1")
    backward = recall(client, "r1", {"cursor": "m5", "limit": 3, "page": -1}, current_thread_id="t1")

    assert _ids(forward["messages"]) == ["m6", "m7", "m8"]
    assert (forward["hasNextPage"], forward["hasPrevPage"]) == (True, False)
    assert _ids(later["messages"]) == ["m9", "m9b"]
    assert (later["hasNextPage"], later["hasPrevPage"]) == (False, True)
    assert _ids(backward["messages"]) == ["m2", "m3", "m4"]
    assert (backward["hasNextPage"], backward["hasPrevPage"]) == (False, True)


def test_part_index_past_the_end_reads_the_next_visible_message(client: Client) -> None:
    _conversation(client)

    answer = recall(client, "r1", {"cursor": "m4", "partIndex": 5}, current_thread_id="t1")

    assert answer["messageId"] == "m5" and answer["text"].endswith("t1 message 5")


@pytest.mark.parametrize("hostile", HOSTILE_IDS)
def test_another_resources_ids_leak_nothing(client: Client, hostile: str) -> None:
    _conversation(client)
    calls = [
        {"threadId": hostile},
        {"threadId": hostile, "cursor": "m1"},
        {"cursor": hostile},
        {"cursor": hostile, "partIndex": 0},
        {"mode": "threads", "threadId": "current"},
    ]

    answers = [recall(client, "r1", call, current_thread_id=hostile) for call in calls]
    listing = recall(client, "r1", {"mode": "threads"}, current_thread_id=hostile)

    assert answers[0] == answers[1] == {"error": NOT_IN_RESOURCE}
    if ":" in hostile:  # looks like an observation range: answered with a hint, never with messages
        assert answers[2]["count"] == 0 and "is a range" in answers[2]["messages"]
    else:
        assert "No message" in answers[2]["error"] and answers[2] == answers[3]
    assert not any(_ids(str(answer.get("messages", ""))) for answer in answers)
    assert "error" in answers[4]
    assert "SECRET" not in repr(answers) + repr(listing) and "t-other" not in listing["threads"]
    assert client.command("SELECT count() FROM om_messages") == 14


def test_unknown_and_foreign_ids_get_identical_answers(client: Client) -> None:
    _conversation(client)

    assert recall(client, "r1", {"threadId": "t-other"}) == recall(client, "r1", {"threadId": "never-existed"})
    foreign = recall(client, "r1", {"cursor": "m-other"})["error"].replace("m-other", "ID")
    unknown = recall(client, "r1", {"cursor": "nothing"})["error"].replace("nothing", "ID")
    assert foreign == unknown


def test_thread_scope_keeps_to_the_current_thread(client: Client) -> None:
    _conversation(client)

    threads = recall(client, "r1", {"mode": "threads"}, current_thread_id="t1", scope="thread")
    other_thread_cursor = recall(client, "r1", {"cursor": "n0"}, current_thread_id="t1", scope="thread")
    ignored_thread_id = recall(client, "r1", {"threadId": "t2", "limit": 1}, current_thread_id="t1", scope="thread")

    assert threads["count"] == 1 and threads["threads"].startswith("- **Setup** ← current\n  id: t1")
    assert "error" in other_thread_cursor
    assert ignored_thread_id["cursor"] == "m0"


def test_resource_scope_cursor_from_another_thread_names_the_thread_to_pass(client: Client) -> None:
    _conversation(client)

    answer = recall(client, "r1", {"cursor": "n0"}, current_thread_id="t1")
    no_current = recall(client, "r1", {"cursor": "n0"})

    assert answer["count"] == 0 and 'threadId="t2"' in answer["messages"]
    assert "[n0]" not in no_current["messages"] and no_current["count"] == 0  # nothing after n0 in t2


def test_threads_listing_orders_by_activity_with_titles_dates_and_pages(client: Client) -> None:
    _conversation(client)

    listing = recall(client, "r1", {"mode": "threads"}, current_thread_id="t1")
    first_page = recall(client, "r1", {"mode": "threads", "limit": 1})
    second_page = recall(client, "r1", {"mode": "threads", "limit": 1, "page": 1})
    after = recall(client, "r1", {"mode": "threads", "after": "2026-01-02"})

    assert listing["threads"] == (
        "- **Follow-up**\n  id: t2\n  updated: 2026-01-04 00:00:00Z | created: 2026-01-04 00:00:00Z\n"
        "- **Setup** ← current\n  id: t1\n  updated: 2026-01-01 00:00:09Z | created: 2026-01-01 00:00:00Z"
    )
    assert (first_page["count"], first_page["hasMore"], second_page["hasMore"]) == (1, True, False)
    assert "id: t1" in second_page["threads"]
    assert after["count"] == 1 and "id: t2" in after["threads"]


def test_a_deleted_thread_is_not_recalled(client: Client) -> None:
    _conversation(client)
    client.insert(
        "om_deleted_keys", [["r1", "thread:t2", "t2", T0 + 4 * DAY, 1]],
        column_names=["resource_id", "lookup_key", "thread_id", "deleted_at", "version"],
    )

    assert recall(client, "r1", {"threadId": "t2"}) == {"error": NOT_IN_RESOURCE}
    assert "t2" not in recall(client, "r1", {"mode": "threads"})["threads"]


GROUPS_T1 = (
    '<observation-group id="g-db" range="m0:m3">\n* User chose PostgreSQL 16 for the billing database\n'
    "</observation-group>\n"
    '<observation-group id="g-ui" range="m4:m9">\n* User wants a dark theme for the dashboard colors\n'
    "</observation-group>\n"
)
GROUPS_T2 = '<observation-group id="g-trip" range="n0:n0">\n* User is planning a trip to Lisbon in May\n</observation-group>\n'


def _index(client: Client, embedder: Any) -> None:
    index_observation_groups(client, embedder, resource_id="r1", thread_id="t1", observations=GROUPS_T1, observed_at=T0 + DAY)
    index_observation_groups(client, embedder, resource_id="r1", thread_id="t2", observations=GROUPS_T2, observed_at=T0 + 3 * DAY)
    secret = '<observation-group id="g-secret" range="m-other:m-other">\n* SECRET billing database password\n</observation-group>\n'
    index_observation_groups(client, embedder, resource_id="r2", thread_id="t-other", observations=secret, observed_at=T0)


def test_search_with_the_hashing_embedder_ranks_groups_and_stays_in_the_resource(client: Client) -> None:
    _conversation(client)
    embedder = HashingEmbedder()
    _index(client, embedder)
    _index(client, embedder)  # indexing again replaces rows

    answer = recall(client, "r1", {"mode": "search", "query": "billing database", "limit": 2},
                    current_thread_id="t2", search_enabled=True, embedder=embedder)
    filtered = recall(client, "r1", {"mode": "search", "query": "database", "after": "2026-01-03"},
                      current_thread_id="t2", search_enabled=True, embedder=embedder)
    off = recall(client, "r1", {"mode": "search", "query": "x"}, search_enabled=False, embedder=embedder)

    assert client.command("SELECT count() FROM om_observation_vectors FINAL") == 4
    first = answer["results"].split("\n\n### ")[0]
    assert first.startswith("### Older memory from another thread") and "- observation group: g-db" in first
    assert "- thread: t1 (Setup)" in first and "- source: raw messages from ID m0 through ID m3" in first
    assert "SECRET" not in answer["results"] and answer["count"] == 2
    assert filtered["count"] == 1 and "g-trip" in filtered["results"] and "### Current thread memory" in filtered["results"]
    assert off == {"results": SEARCH_NOT_CONFIGURED, "count": 0}


def test_search_with_minilm_finds_meaning_without_shared_words(client: Client) -> None:
    minilm = MiniLMEmbedder()
    _conversation(client)
    _index(client, minilm)

    answer = recall(client, "r1", {"mode": "search", "query": "vacation travel to Portugal"},
                    current_thread_id="t1", search_enabled=True, embedder=minilm)

    assert answer["results"].split("\n\n### ")[0].count("- observation group: g-trip") == 1
    assert "SECRET" not in answer["results"]
