"""The ready redaction hook: secrets and PII leave the messages before the Observer sees them.

``OM_REDACT=true`` installs it first in ``before_observation`` (and makes the sink store redacted
messages, see :func:`redactor_for`); it can also be named in ``OM_HOOKS`` by itself. Which PII
patterns apply comes from ``OM_REDACT_PII`` / ``OM_REDACT_PATTERNS``.
"""

from __future__ import annotations

from functools import lru_cache

from processors.redaction import Redactor
from schemas.jobs import ObserveJob
from schemas.messages import ChatMessage
from streams.settings import Settings, get_settings


def redactor_for(settings: Settings) -> Redactor:
    return Redactor(settings.redact_pii, settings.redact_patterns)


@lru_cache(maxsize=1)
def _redactor() -> Redactor:
    return redactor_for(get_settings())


def redact_messages(messages: list[ChatMessage], job: ObserveJob) -> list[ChatMessage]:
    """A ``before_observation`` hook: the same messages, every secret and chosen PII replaced."""
    return _redactor().messages(messages)
