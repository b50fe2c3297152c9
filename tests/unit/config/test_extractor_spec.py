"""Spec §5.6 extractor construction rules: scenario 10 (slugs) and the §2.8 extractor errors."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from processors.config.model import OMConfig
from processors.config.extractor_spec import (
    BUILTIN_EXTRACTORS,
    CURRENT_TASK,
    THREAD_TITLE,
    ExtractorSpec,
    slugify,
)


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("User profile", "user-profile"),
        ("  Mood  ", "mood"),
        ('user\'s `favourite` "food"', "users-favourite-food"),
        ("A  b -- c!!", "a-b-c"),
        ("Next steps (v2)", "next-steps-v2"),
    ],
)
def test_s10_slugify(name: str, slug: str) -> None:
    assert slugify(name) == slug


def test_s10_user_extractor_defaults() -> None:
    spec = ExtractorSpec(name="User profile", instructions="Who the user is")
    assert spec.slug == "user-profile"
    assert spec.mode == "inline"
    assert spec.metadata_key_path == "extracted.user-profile"
    assert spec.include_previous_extraction is True
    assert spec.retry_structured_extraction_on_empty_object is False


def test_s10_reserved_slug_for_user_extractor() -> None:
    with pytest.raises(ValidationError, match="reserved slug 'thread-title'"):
        ExtractorSpec(name="Thread Title", instructions="x")


def test_s10_duplicate_slugs_in_one_pipeline() -> None:
    extract = [{"name": "A b", "instructions": "x"}, {"name": "a-b", "instructions": "y"}]
    with pytest.raises(ValidationError, match="slug 'a-b', already used"):
        OMConfig(observation={"extract": extract})
    with pytest.raises(ValidationError, match="slug 'a-b', already used"):
        OMConfig(reflection={"extract": extract})


def test_s10_same_slug_in_observer_and_reflector_pipelines_is_fine() -> None:
    extract = [{"name": "Mood", "instructions": "x"}]
    config = OMConfig(observation={"extract": extract}, reflection={"extract": extract})
    assert config.observation.extract[0].slug == config.reflection.extract[0].slug == "mood"


def test_working_memory_slug_is_taken_when_om_manages_working_memory() -> None:
    extract = [{"name": "Working memory", "instructions": "x"}]
    assert OMConfig(observation={"extract": extract})
    with pytest.raises(ValidationError, match="slug 'working-memory', already used"):
        OMConfig(observation={"extract": extract, "manage_working_memory": True})


def test_schema_makes_extractor_structured() -> None:
    spec = ExtractorSpec.model_validate(
        {"name": "Profile", "instructions": "x", "schema": {"type": "object"}}
    )
    assert spec.mode == "structured"
    assert spec.json_schema == {"type": "object"}


def test_metadata_key_path_false_means_not_persisted() -> None:
    assert (
        ExtractorSpec(name="Mood", instructions="x", metadata_key_path=False).metadata_key_path
        is False
    )


def test_hook_extractor_names_its_hook() -> None:
    spec = ExtractorSpec.model_validate(
        {"name": "Todo", "mode": "hook", "onExtracted": "todo-sync"}
    )
    assert (spec.mode, spec.on_extracted) == ("hook", "todo-sync")


def test_builtins_may_use_reserved_slugs() -> None:
    assert [spec.slug for spec in BUILTIN_EXTRACTORS] == [
        "current-task",
        "suggested-response",
        "thread-title",
    ]
    assert all(spec.mode == "inline" for spec in BUILTIN_EXTRACTORS)
    assert CURRENT_TASK.metadata_key_path == "currentTask"
    assert THREAD_TITLE.metadata_key_path == "threadTitle"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"name": "  ", "instructions": "x"}, "name must not be empty"),
        ({"name": "Mood"}, "needs instructions"),
        ({"name": "Mood", "instructions": "   "}, "needs instructions"),
        ({"name": "Todo", "mode": "hook"}, "needs on_extracted"),
        (
            {"name": "Todo", "mode": "hook", "on_extracted": "h", "instructions": "x"},
            "may not have instructions or json_schema",
        ),
        (
            {"name": "Todo", "mode": "hook", "on_extracted": "h", "json_schema": {}},
            "may not have instructions or json_schema",
        ),
        ({"name": "Todo", "mode": "structured", "instructions": "x"}, "needs a json_schema"),
        ({"name": "1st item", "instructions": "x"}, "must start with a letter"),
        ({"name": "!!!", "instructions": "x"}, "must start with a letter"),
        ({"name": "Observations", "instructions": "x"}, "reserved slug 'observations'"),
        (
            {"name": "Mood", "instructions": "x", "metadata_key_path": "a.__proto__"},
            "unsafe segment '__proto__'",
        ),
        (
            {"name": "Mood", "instructions": "x", "metadata_key_path": "constructor"},
            "unsafe segment 'constructor'",
        ),
        (
            {"name": "Mood", "instructions": "x", "metadata_key_path": "x.prototype.y"},
            "unsafe segment 'prototype'",
        ),
        ({"name": "Mood", "instructions": "x", "metadata_key_path": "a..b"}, "empty segment"),
    ],
)
def test_extractor_construction_errors(fields: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ExtractorSpec.model_validate(fields)
