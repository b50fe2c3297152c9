"""Spec §10.2 configuration scenarios 1–8 and 11: defaults, encodings, model fallback chain."""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import ValidationError

from processors.config.model import (
    ModelByInputTokens,
    OMConfig,
    RetrievalConfig,
    dynamic_threshold,
)


def test_s01_empty_config_defaults() -> None:
    config = OMConfig()
    resolved = config.resolved
    assert config.observer_model() == config.reflector_model() == "google/gemini-2.5-flash"
    assert (resolved.message_tokens_min, resolved.message_tokens_max) == (30_000, 30_000)
    assert resolved.buffer_tokens == 6000
    assert resolved.activation_ratio == 0.8
    assert resolved.retention_floor == 6000
    assert resolved.block_after == 36_000
    assert resolved.reflection_tokens == 40_000
    assert resolved.reflection_buffer_activation == 0.5
    assert resolved.reflection_block_after == 48_000
    assert resolved.async_observation and resolved.async_reflection
    assert config.observation.previous_observer_tokens == 2000
    assert config.observation.observe_attachments == ["image/*", "application/pdf"]
    assert config.observation.model_settings.max_output_tokens == 100_000
    assert config.reflection.model_settings.max_output_tokens == 100_000
    assert config.observation.model_settings.temperature == 0.3
    assert config.reflection.model_settings.temperature == 0.0
    assert config.observation.provider_options == {
        "google": {"thinkingConfig": {"thinkingBudget": 215}}
    }
    assert config.reflection.provider_options == {
        "google": {"thinkingConfig": {"thinkingBudget": 1024}}
    }


def test_s03_observation_model_only_is_used_by_reflector_too() -> None:
    config = OMConfig(observation={"model": "c/d"})
    assert config.observer_model() == config.reflector_model() == "c/d"
    # A model of the user's choosing gets no silent output budget.
    assert config.observation.model_settings.max_output_tokens is None
    assert config.reflection.model_settings.max_output_tokens is None


def test_s03_default_literal_means_role_default() -> None:
    config = OMConfig(model="default")
    assert config.observer_model() == "google/gemini-2.5-flash"
    assert config.reflection.model_settings.max_output_tokens == 100_000


def test_s03_model_settings_only_fill_unset_values() -> None:
    config = OMConfig(observation={"model_settings": {"temperature": 0.9}})
    assert config.observation.model_settings.temperature == 0.9
    assert config.observation.model_settings.max_output_tokens == 100_000


def test_s03_temperature_only_for_models_that_accept_one() -> None:
    config = OMConfig(model="openai/o3-mini")
    assert config.observation.model_settings.temperature is None
    assert OMConfig(model="openai/gpt-5-chat-latest").observation.model_settings.temperature is None
    tiers = OMConfig(model={"upTo": {10_000: "openai/gpt-4o-mini", 100_000: "openai/gpt-5"}})
    assert isinstance(tiers.observer_model(), ModelByInputTokens)
    assert tiers.observation.model_settings.temperature is None
    assert tiers.observation.model_settings.max_output_tokens == 100_000


@pytest.mark.parametrize(("model", "observer", "reflector"), [
    ("google/gemini-2.5-flash", 0.3, 0.0),      # listed in Mastra's registry
    ("openai/gpt-4o", 0.3, 0.0),
    ("anthropic/claude-sonnet-4-5", 0.3, 0.0),
    ("openrouter/openai/gpt-4o-mini", 0.3, 0.0),  # a gateway: asked about the nested provider
    ("openai/qwen-local", None, None),          # a local OpenAI-compatible server's alias
    ("ollama/llama3.2", None, None),            # a provider without a list
    ("google/gemini-2.0-flash", None, None),    # not listed
    ("openai/gpt-5", None, None),
])
def test_s03_default_temperature_only_where_mastra_sends_one(model, observer, reflector) -> None:
    config = OMConfig(model=model)
    assert config.observation.model_settings.temperature == observer
    assert config.reflection.model_settings.temperature == reflector


def test_s03_a_model_named_explicitly_gets_no_output_budget_even_the_default_one() -> None:
    for config in (OMConfig(model="google/gemini-2.5-flash"), OMConfig.from_mastra(True),
                   OMConfig(observation={"model": "openai/qwen-local"})):
        assert config.observation.model_settings.max_output_tokens is None
        assert config.reflection.model_settings.max_output_tokens is None
    assert OMConfig(model="google/gemini-2.5-flash",
                    observation={"model_settings": {"max_output_tokens": 4096}}).observation.model_settings.max_output_tokens == 4096


def test_s04_resource_scope_without_buffering_keys_turns_buffering_off() -> None:
    resolved = OMConfig(scope="resource").resolved
    assert not resolved.async_observation and not resolved.async_reflection
    assert resolved.buffer_tokens is None and resolved.block_after is None
    assert resolved.reflection_block_after is None
    with pytest.raises(ValidationError, match="not yet supported with scope: 'resource'"):
        OMConfig(scope="resource", observation={"buffer_tokens": 5000})


def test_s05_share_token_budget_range() -> None:
    with pytest.raises(ValidationError, match="share_token_budget"):
        OMConfig(share_token_budget=True)
    resolved = OMConfig(share_token_budget=True, observation={"buffer_tokens": False}).resolved
    assert (resolved.message_tokens_min, resolved.message_tokens_max) == (30_000, 70_000)
    assert resolved.reflection_tokens == 40_000
    assert resolved.buffer_tokens is None and not resolved.async_reflection


def test_s05_share_token_budget_with_resource_default_needs_nothing_else() -> None:
    resolved = OMConfig(scope="resource", share_token_budget=True).resolved
    assert resolved.message_tokens_max == 70_000


def test_s06_buffer_tokens_encodings() -> None:
    assert (
        OMConfig(
            observation={"buffer_tokens": 0.25, "message_tokens": 20_000}
        ).resolved.buffer_tokens
        == 5000
    )
    with pytest.raises(ValidationError, match=r"must be less than observation\.message_tokens"):
        OMConfig(observation={"buffer_tokens": 30_000})
    assert OMConfig(observation={"buffer_tokens": 1}).resolved.buffer_tokens == 1


def test_s06_buffer_tokens_true_is_not_one_token() -> None:
    with pytest.raises(ValidationError, match="true is not a number"):
        OMConfig(observation={"buffer_tokens": True})


def test_s07_buffer_activation_encodings() -> None:
    with pytest.raises(ValidationError, match=r"must be <= 1 \(a ratio\) or >= 1000"):
        OMConfig(observation={"buffer_activation": 500})
    resolved = OMConfig(observation={"buffer_activation": 5000}).resolved
    assert resolved.retention_floor == 5000
    assert resolved.activation_ratio == pytest.approx(0.8333, abs=1e-4)
    assert resolved.retention_floor_is_absolute


def test_s08_block_after_encodings() -> None:
    assert (
        OMConfig(observation={"block_after": 1.5, "message_tokens": 20_000}).resolved.block_after
        == 30_000
    )
    with pytest.raises(ValidationError, match=r"must be >= observation\.message_tokens"):
        OMConfig(observation={"block_after": 100})
    assert OMConfig(observation={"block_after": 50_000}).resolved.block_after == 50_000


def test_s08_reflection_block_after_encodings() -> None:
    assert OMConfig(reflection={"block_after": 1.5}).resolved.reflection_block_after == 60_000
    assert OMConfig(reflection={"block_after": 45_000}).resolved.reflection_block_after == 45_000


@pytest.mark.parametrize(
    ("observation_tokens", "threshold"),
    [(0, 70_000), (10_000, 60_000), (50_000, 30_000), (33_333, 36_667)],
)
def test_s11_dynamic_threshold(observation_tokens: int, threshold: int) -> None:
    resolved = OMConfig(share_token_budget=True, observation={"buffer_tokens": False}).resolved
    assert dynamic_threshold(resolved, observation_tokens) == threshold
    assert dynamic_threshold((30_000, 70_000), observation_tokens) == threshold


def test_s11_fixed_threshold_ignores_observation_tokens() -> None:
    assert dynamic_threshold(OMConfig().resolved, 50_000) == 30_000


def test_mastra_camel_case_json_reads_as_snake_case() -> None:
    config = OMConfig.from_mastra(
        b'{"scope":"thread","activateAfterIdle":"5m","observation":{"messageTokens":20000,'
        b'"bufferTokens":0.25,"modelSettings":{"maxOutputTokens":512},"observeAttachments":"auto"},'
        b'"reflection":{"observationTokens":30000}}'
    )
    assert config.observation.message_tokens == 20_000
    assert config.resolved.buffer_tokens == 5000
    assert config.resolved.activate_after_idle == 300_000
    assert config.observation.model_settings.max_output_tokens == 512
    assert config.observation.observe_attachments == "auto"
    assert config.resolved.reflection_tokens == 30_000


def test_mastra_true_and_false() -> None:
    assert OMConfig.from_mastra(True).model == "google/gemini-2.5-flash"
    assert OMConfig.from_mastra(False).enabled is False
    assert OMConfig.from_mastra({"enabled": False}).enabled is False


def test_unknown_option_is_refused() -> None:
    with pytest.raises(ValidationError, match="bufferToken"):
        OMConfig.from_mastra({"observation": {"bufferToken": 0.3}})


def test_round_trip_through_json_keeps_config_and_resolution() -> None:
    config = OMConfig(
        model={"up_to": {8000: "openai/gpt-4o-mini", 200_000: "google/gemini-2.5-pro"}},
        activate_after_idle="auto",
        observation={
            "buffer_activation": 5000,
            "extract": [{"name": "Mood", "instructions": "mood"}],
        },
    )
    again = OMConfig.model_validate_json(config.model_dump_json())
    assert again == config
    assert again.resolved == config.resolved
    assert "resolved" not in config.model_dump()


def test_config_is_frozen() -> None:
    config = OMConfig()
    with pytest.raises(ValidationError):
        config.observation.message_tokens = 10  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.resolved.buffer_tokens = 1  # type: ignore[misc]


def test_idle_settings_inherit_for_observation_only() -> None:
    resolved = OMConfig(activate_after_idle="90s", activate_on_provider_change=True).resolved
    assert resolved.activate_after_idle == 90_000
    assert resolved.activate_on_provider_change is True
    assert resolved.reflection_activate_after_idle is None
    assert resolved.reflection_activate_on_provider_change is False
    opted_out = OMConfig(
        activate_after_idle="auto",
        activate_on_provider_change=True,
        observation={"activate_after_idle": False, "activate_on_provider_change": False},
        reflection={"activate_after_idle": "1h"},
    ).resolved
    assert opted_out.activate_after_idle is None
    assert opted_out.activate_on_provider_change is False
    assert opted_out.reflection_activate_after_idle == 3_600_000


def test_retrieval_true_means_defaults() -> None:
    assert OMConfig(retrieval=True).retrieval_config() == RetrievalConfig(scope="resource")
    assert OMConfig().retrieval_config() is None


def test_timezone_must_be_known() -> None:
    assert OMConfig(timezone="Europe/Paris").timezone == "Europe/Paris"
    with pytest.raises(ValidationError, match="IANA time zone"):
        OMConfig(timezone="Mars/Olympus")
