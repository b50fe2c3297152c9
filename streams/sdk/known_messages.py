"""A context read reuses the messages (and their chat turns) the read before it validated (issue 19:
the agent's turn), and makes the ``chat`` the SDK asks the reader to leave out.

An agent reads its thread's context at every turn, and the window mostly lists the messages the read
before listed. Validating each again (``ChatMessage``, ~8 µs a message) was a fifth of the agents'
CPU at 32 agents on 100 threads × 30 turns (py-spy on the benchmark's client), on the same cores as
the worker. And ``chat`` repeats every message's text and the system texts (~half the body's
bytes), so the SDK reads with ``chat=false`` and makes it here. Rules this file keeps:

* **A message is reused only when its JSON is the same** (by id, then every field): validation is a
  function of the JSON alone, so the response is what validating the whole body gives.
* **The chat is the reader's** (:meth:`processors.context.AgentContext.as_chat`, the rule the reader
  writes it by): a message's turn depends on the message alone, so a reused message's turn is too.
  A body that brings its chat (a reader that does not know ``chat=false``) keeps it.
* **Per (thread, resource), the last response's messages only**, for at most :data:`MAX_THREADS`
  threads, least recently read dropped first: an agent process serving many users stays bounded.
* Nothing is changed after it is validated (the SDK copies a response to add its own messages:
  streams/sdk/own_writes.py), so responses may share messages and turns.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from processors.context import chat_turn
from schemas.messages import ChatMessage
from streams.reader.models import ChatTurn, ContextResponse

MAX_THREADS = 1024

_Known = tuple[dict[str, Any], ChatMessage, ChatTurn]  # a message's JSON, its model, its chat turn


class KnownMessages:
    def __init__(self, max_threads: int = MAX_THREADS) -> None:
        self._max_threads = max_threads
        self._last: OrderedDict[tuple[str, str], dict[str, _Known]] = OrderedDict()

    def response(self, body: Any) -> ContextResponse:
        """``ContextResponse.model_validate(body)`` (``body``: the parsed answer, changed here), with
        the messages the thread's last response validated from the same JSON taken as they are, and
        the chat made from the rest when the body has none."""
        raws = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(raws, list):
            return ContextResponse.model_validate(body)  # not a context: the model says what is wrong
        ident = (str(body.get("thread_id")), str(body.get("resource_id")))
        known = self._last.get(ident, {})
        hits: list[_Known | None] = []
        for raw in raws:
            hit = known.get(raw.get("id")) if isinstance(raw, dict) else None
            hits.append(hit if hit is not None and hit[0] == raw else None)
        body["messages"] = [hit[1] if hit is not None else raw for hit, raw in zip(hits, raws, strict=True)]
        response = ContextResponse.model_validate(body)
        turns = [hit[2] if hit is not None else ChatTurn(**chat_turn(message))
                 for hit, message in zip(hits, response.messages, strict=True)]
        if not response.chat and (response.system or response.continuation is not None or response.messages):
            continued = [ChatTurn(**chat_turn(response.continuation))] if response.continuation is not None else []
            response.chat = [*(ChatTurn(role="system", content=text) for text in response.system), *continued, *turns]
        self._last[ident] = {m.id: (raw, m, turn) for raw, m, turn in zip(raws, response.messages, turns, strict=True)}
        self._last.move_to_end(ident)
        while len(self._last) > self._max_threads:
            self._last.popitem(last=False)
        return response
