"""Working memory managed by the Observer (``observation.manage_working_memory``, spec §5.6).

The Observer keeps a small structured block — who the user is, what they want, what is open — by
rewriting it whole in a ``<working-memory>`` section of its answer. The core keeps the newest value
on the record (per lookup key) and the reader hands it to the agent as its own block *after* the
observations, so updating it never changes the cached observation prefix.
"""

from __future__ import annotations

from typing import Any

from processors.config import WORKING_MEMORY_SLUG, ExtractorSpec

DEFAULT_TEMPLATE = """# Working memory
- **Name**:
- **Location**:
- **Preferences**:
- **Goals**:
- **Open tasks**:"""


def working_memory_extractor(template: str | None, current: str | None) -> ExtractorSpec:
    instructions = (
        "Maintain the working memory: durable facts about the user and the task at hand, in the Markdown "
        "template below. Rewrite the whole block every time: keep what still holds, update what changed, "
        "leave unknown fields empty, never invent.\n\n"
        f"Template:\n{template or DEFAULT_TEMPLATE}\n\nCurrent working memory:\n{current or '(empty)'}"
    )
    return ExtractorSpec.builtin(name="working memory", instructions=instructions,
                                 include_previous_extraction=False, metadata_key_path=False)


def split_working_memory(values: dict[str, Any] | None) -> tuple[str | None, dict[str, Any] | None]:
    """(new working memory, the other extracted values): the block is not an ordinary extracted value."""
    if not values or WORKING_MEMORY_SLUG not in values:
        return None, values
    rest = {k: v for k, v in values.items() if k != WORKING_MEMORY_SLUG}
    value = values[WORKING_MEMORY_SLUG]
    text = value if isinstance(value, str) else str(value)
    return (text.strip() or None), (rest or None)
