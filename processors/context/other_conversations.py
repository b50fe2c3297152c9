"""Resource scope: what the user said in their other threads that no observation covers yet.

One record serves every thread of a resource, so a fact told in thread A reaches thread B's agent
through the observations, but only after the Observer has run. Until then the actor is shown A's
unobserved messages for reference (spec §4.9, §7.1), rendered like Observer input with every part
cut to 500 characters: enough to notice "I moved to Lisbon", not enough to drown the current
conversation. Pure: the reader brings the messages.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

import xxhash

from processors.context.prompts import OTHER_CONVERSATIONS_CLOSE, OTHER_CONVERSATIONS_INTRO, OTHER_CONVERSATIONS_OPEN
from processors.model_port import TokenCounter
from processors.observer.render import HistoryRenderer, RenderOptions, history_text
from schemas.messages import ChatMessage

PART_CHAR_LIMIT = 500


def shown_thread_id(thread_id: str, obscure: bool) -> str:
    """``obscure_thread_ids``: the model sees XXH32 hex (Mastra's ``h32ToString``), so ids such as
    ``answer_…`` or a customer number carry no meaning or personal data into the prompt."""
    return xxhash.xxh32_hexdigest(thread_id.encode()) if obscure else thread_id


def other_conversations_block(messages_by_thread: Mapping[str, Sequence[ChatMessage]], current_thread_id: str,
                              counter: TokenCounter, tz: str = "UTC", *, obscure_ids: bool = False) -> str:
    """The system message listing each other thread's unobserved messages, or "" when none.

    Threads appear in the order their oldest unobserved message was written; each gets its own
    renderer, so attachment numbers and tool pairing restart per thread as in Mastra.
    """
    threads = sorted(((thread_id, sorted(messages, key=lambda m: m.created_at))
                      for thread_id, messages in messages_by_thread.items()
                      if thread_id != current_thread_id and messages),
                     key=lambda item: (item[1][0].created_at, item[0]))
    blocks = []
    for thread_id, messages in threads:
        renderer = HistoryRenderer(counter, RenderOptions(tz=tz, observe_attachments=False,
                                                          part_char_limit=PART_CHAR_LIMIT))
        text = history_text(renderer.render_body(messages))
        if text.strip():
            shown = escape(shown_thread_id(thread_id, obscure_ids))
            blocks.append(f'<other-conversation id="{shown}">\n{text}\n</other-conversation>')
    if not blocks:
        return ""
    body = "\n\n".join(blocks)
    return f"{OTHER_CONVERSATIONS_INTRO}\n{OTHER_CONVERSATIONS_OPEN}\n{body}\n{OTHER_CONVERSATIONS_CLOSE}"
