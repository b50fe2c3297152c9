"""What the built-in inline extractors ask for (spec §5.6): current task, suggested response, title.

Each text is rendered inside its ``<slug>`` template in the Observer's (and, for the suggested
response, the Reflector's) system prompt. The rules they carry are listed in
``processors/observer/README.md`` (ids ``X-…``) and checked by ``tests/unit/test_prompt_checklist.py``.
"""

from __future__ import annotations

CURRENT_TASK_INSTRUCTIONS = """Name the task or tasks in progress; there may be one or several:
- Primary: what the agent is working on right now
- Secondary: other open tasks; mark the ones that wait for the user as "waiting for user"
If the agent started on something the user neither asked for nor approved, say that it is off-task."""

SUGGESTED_RESPONSE_INSTRUCTIONS = """A hint for the agent's very next message: how it should pick up. For example:
- the opening of its reply: "The new schedule is ready; here is what changed..."
- an instruction to hold back: "Wait for the user's answer before continuing."
- the next action: Open tests/test_parser.py and rerun the failing case."""

THREAD_TITLE_INSTRUCTIONS = """A short title for this conversation: a noun phrase of 2 to 5 words, not a sentence. For example:
- "Invoice rounding fix", not "Fixing the invoice rounding"
- "Oslo trip plan", not "User wants to plan a trip to Oslo"
- "Garden watering schedule", not "Setting up a schedule for watering the garden"
Change the title only when the topic of the conversation has clearly changed."""
