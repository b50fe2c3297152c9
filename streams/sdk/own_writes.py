"""Read-your-writes without waiting on the pipeline: the client adds its own unseen messages.

An agent sends a message and at once asks for the context that includes it. Waiting until the
processor has folded it and the sink has stored it costs a commit interval and a sink batch; but
the client already holds the message. So the SDK remembers what it sent (per thread, bounded) and
:func:`with_own_messages` appends each remembered message the reader's answer does not cover yet:

* covered = listed among the context's messages (materialised), or observed — its time is at or
  before the record's cursor (``observed_through``), so its content is in the observations;
* the rest is appended in time order after the reader's messages, each as the reader would render
  it, so the agent's next model call sees exactly what it sent.

The answer says which messages came from the client (``own_messages``). A message dated before the
cursor and not yet materialised (a late write) is not appended: it is shown once stored. On a
thread's first turn the reader does not know the thread yet (404); a client that wrote to it gets
the context it can vouch for — its own messages.
"""

from __future__ import annotations

from collections import OrderedDict

from processors.context import AgentContext
from schemas.messages import ChatMessage
from streams.reader.models import ChatTurn, ContextResponse

KEPT_PER_THREAD = 256


class OwnWrites:
    """The messages this client sent, per thread, newest ``KEPT_PER_THREAD`` kept."""

    def __init__(self, kept: int = KEPT_PER_THREAD) -> None:
        self.kept = kept
        self._sent: dict[str, OrderedDict[str, ChatMessage]] = {}

    def remember(self, messages: list[ChatMessage]) -> None:
        for message in messages:
            sent = self._sent.setdefault(message.thread_id, OrderedDict())
            sent.pop(message.id, None)
            sent[message.id] = message
            while len(sent) > self.kept:
                sent.popitem(last=False)

    def sent_as(self, thread_id: str, resource_id: str | None) -> str | None:
        """The resource this client wrote ``thread_id`` as (``resource_id`` if given), or None if it did not."""
        for message in self._sent.get(thread_id, {}).values():
            if resource_id is None or message.resource_id in (None, resource_id):
                return resource_id or message.resource_id or thread_id
        return None

    def merge(self, response: ContextResponse) -> ContextResponse:
        sent = self._sent.get(response.thread_id)
        if not sent:
            return response
        mine = [m for m in sent.values() if m.resource_id in (None, response.resource_id)]
        merged = with_own_messages(response, mine)
        for mid in [m.id for m in response.messages] + _observed(sent.values(), response.observed_through):
            sent.pop(mid, None)  # the reader covers them now: forget
        return merged


def _observed(messages, through: int | None) -> list[str]:
    return [m.id for m in messages if through is not None and m.created_at <= through]


def with_own_messages(response: ContextResponse, sent: list[ChatMessage]) -> ContextResponse:
    listed = {m.id for m in response.messages}
    through = response.observed_through
    own = sorted((m for m in sent if m.id not in listed and (through is None or m.created_at > through)),
                 key=lambda m: m.created_at)
    if not own:
        return response
    turns = AgentContext(messages=own).as_chat()
    return response.model_copy(update={
        "messages": [*response.messages, *own],
        "chat": [*response.chat, *(ChatTurn(**turn) for turn in turns)],
        "own_messages": [m.id for m in own],
    })
