"""Faust's own topics exist, configured as Faust declares them, before a worker joins its group
(streams/internal_topics.py: a group leader whose metadata lacks the changelog assigns no partition of it)."""

from __future__ import annotations

import uuid

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from streams.internal_topics import MAX_RECORD_BYTES, app_id, changelog_topic, leader_topic
from streams.services.kafka_topics import delete_topics
from streams.settings import Settings
from streams.topics import Topics
from streams.worker import ensure_topics

pytestmark = pytest.mark.integration


async def _described(bootstrap: str, names: list[str]) -> dict[str, tuple[int, dict[str, str]]]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        present = set(await admin.list_topics())
        out = {}
        for d in await admin.describe_topics([n for n in names if n in present]):
            [response] = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, d["topic"])])
            entries = response.to_object()["resources"][0]["config_entries"]
            out[d["topic"]] = (len(d["partitions"]), {e["config_names"]: e["config_value"] for e in entries})
        return out
    finally:
        await admin.close()


@pytest.mark.parametrize("role", ["all", "processor", "llm"])
async def test_a_roles_faust_topics_are_created_before_it_starts(kafka_bootstrap: str, role: str) -> None:
    prefix = f"it{uuid.uuid4().hex[:8]}"
    settings = Settings(kafka_bootstrap=kafka_bootstrap, topic_prefix=prefix, partitions=3)
    app = app_id(prefix, role)  # type: ignore[arg-type]
    names = [changelog_topic(app), leader_topic(app)]
    try:
        await ensure_topics(settings, role)  # type: ignore[arg-type]
        found = await _described(kafka_bootstrap, names)
        assert found[leader_topic(app)][0] == 1
        if role == "llm":  # no state table: no changelog
            assert changelog_topic(app) not in found
        else:
            partitions, config = found[changelog_topic(app)]
            assert partitions == 3
            assert config["cleanup.policy"] == "compact"
            assert config["max.message.bytes"] == str(MAX_RECORD_BYTES)
        await ensure_topics(settings, role)  # type: ignore[arg-type]  # a restart finds them: no error
    finally:
        await delete_topics(kafka_bootstrap, [*names, *Topics.for_prefix(prefix).all()])
