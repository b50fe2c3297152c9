"""The OM configuration: Mastra's option names and defaults, validated once at construction.

What the rest of the project may use: the model (:class:`OMConfig`), the thresholds in force for a
record, the extractors' declarations, TTL checks, the model tiers and the override merge. This room
imports nothing of the state machine or the context assembly (a test keeps it so).
"""

from processors.config.base import ConfigModel
from processors.config.extractor_spec import (
    BUILTIN_EXTRACTORS,
    CURRENT_TASK,
    SUGGESTED_RESPONSE,
    THREAD_TITLE,
    WORKING_MEMORY_SLUG,
    ExtractorSpec,
)
from processors.config.merge import deep_merge
from processors.config.model import OMConfig, RetrievalConfig
from processors.config.model_tiers import ModelByInputTokens, TierOverflowError
from processors.config.resolve import ResolvedConfig
from processors.config.thresholds import dynamic_threshold, effective_message_tokens, effective_reflection_tokens
from processors.config.ttl import did_provider_change, resolve_ttl, ttl_expired

__all__ = [
    "BUILTIN_EXTRACTORS",
    "CURRENT_TASK",
    "SUGGESTED_RESPONSE",
    "THREAD_TITLE",
    "WORKING_MEMORY_SLUG",
    "ConfigModel",
    "ExtractorSpec",
    "ModelByInputTokens",
    "OMConfig",
    "ResolvedConfig",
    "RetrievalConfig",
    "TierOverflowError",
    "deep_merge",
    "did_provider_change",
    "dynamic_threshold",
    "effective_message_tokens",
    "effective_reflection_tokens",
    "resolve_ttl",
    "ttl_expired",
]
