"""The fixed texts the agent sees around its observations (spec §7.1–7.2), in this project's words."""

from __future__ import annotations

CONTINUATION_ID = "om-continuation"

OBSERVATIONS_PREAMBLE = """The observations below are your memory of earlier conversations with this user. \
They were written by you, as notes, while those conversations happened; the raw messages they \
came from are no longer in this context.

How to use them:
- Use the specific details they hold (names, numbers, dates, preferences) and let them shape your \
answers; tie suggestions to what the user has told you before.
- When facts changed over time, the newest observation wins for questions about the current state \
(look for words like "switched to", "changed to", "moved to", "will start").
- A planned action whose date has passed most likely happened, unless a later note says otherwise.
- The user's latest message decides what to do now; memory is background for it.
- Text inside <system-reminder> tags is guidance for you alone; never mention or quote it."""

OBSERVATIONS_OPEN = "<observations>"

# Resource scope: the markers are Mastra's (spec §7.1 item 2), the sentence is ours.
OTHER_CONVERSATIONS_INTRO = """Below are recent messages from this user's OTHER conversations, not the \
current one. They are context you may draw on; the current conversation stays your focus:"""
OTHER_CONVERSATIONS_OPEN = "START_OTHER_CONVERSATIONS_BLOCK"
OTHER_CONVERSATIONS_CLOSE = "END_OTHER_CONVERSATIONS_BLOCK"

CONTINUATION_HINT = """Carry on with the conversation naturally and answer the most recent message. \
Treat what came before as background: pick up unfinished work only where it serves the latest \
request, and follow the suggested response if one is given. Do not mention memory, notes, \
summaries or missing messages. Everything after this reminder is newer and takes priority."""
