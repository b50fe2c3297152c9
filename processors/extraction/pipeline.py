"""Which extractors a call runs, split by how their values come back.

Built-ins (current task, suggested response, thread title) are always inline; a custom
extractor is inline unless it is structured; hook extractors run nowhere near the model.
"""

from __future__ import annotations

from typing import Any

from processors.extraction.types import ExtractorLike, is_structured
from processors.config import CURRENT_TASK, SUGGESTED_RESPONSE, THREAD_TITLE


def builtin_extractors(*, current_task: bool, suggested_response: bool, thread_title: bool) -> list[Any]:
    chosen = [(current_task, CURRENT_TASK), (suggested_response, SUGGESTED_RESPONSE), (thread_title, THREAD_TITLE)]
    return [spec for enabled, spec in chosen if enabled]


def split_extractors(custom: list[ExtractorLike]) -> tuple[list[ExtractorLike], list[ExtractorLike]]:
    """``(inline, structured)`` custom extractors; hook extractors are left out."""
    inline = [e for e in custom if str(e.mode) == "inline"]
    structured = [e for e in custom if is_structured(e)]
    return inline, structured
