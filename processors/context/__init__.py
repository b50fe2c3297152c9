"""What the agent receives (spec §7): observations, hints, other conversations, unobserved messages.

Pure: the reader gathers a record, its per-thread metadata and the unobserved messages, then calls
:func:`build_context`. This room never imports the state machine (a test keeps it so); the date
helpers live here because the actor's wording of time is this room's concern, and the state machine
borrows them for the temporal-gap reminder.
"""

from processors.context.build import AgentContext, build_context, chat_turn, observations_for_actor
from processors.context.dates import day_key, format_reminder_timestamp, iso_timestamp, temporal_gap_text
from processors.context.other_conversations import other_conversations_block
from processors.context.prompts import (
    CONTINUATION_HINT,
    OBSERVATIONS_OPEN,
    OBSERVATIONS_PREAMBLE,
    OTHER_CONVERSATIONS_CLOSE,
    OTHER_CONVERSATIONS_INTRO,
    OTHER_CONVERSATIONS_OPEN,
)

__all__ = [
    "CONTINUATION_HINT",
    "OBSERVATIONS_OPEN",
    "OBSERVATIONS_PREAMBLE",
    "OTHER_CONVERSATIONS_CLOSE",
    "OTHER_CONVERSATIONS_INTRO",
    "OTHER_CONVERSATIONS_OPEN",
    "AgentContext",
    "build_context",
    "chat_turn",
    "day_key",
    "format_reminder_timestamp",
    "iso_timestamp",
    "observations_for_actor",
    "other_conversations_block",
    "temporal_gap_text",
]
