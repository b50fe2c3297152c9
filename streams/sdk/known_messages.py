"""A context read reuses the messages the read before it validated (issue 19: the agent's turn).

An agent reads its thread's context at every turn, and the window mostly lists the messages the read
before listed. Validating each again (``ChatMessage``, ~8 µs a message) was a fifth of the agents'
CPU at 32 agents on 100 threads × 30 turns (py-spy on the benchmark's client), on the same cores as
the worker. Rules this file keeps:

* **A message is reused only when its JSON is the same** (by id, then every field): validation is a
  function of the JSON alone, so the response is what validating the whole body gives.
* **Per (thread, resource), the last response's messages only**, for at most :data:`MAX_THREADS`
  threads, least recently read dropped first: an agent process serving many users stays bounded.
* Nothing is changed after it is validated (the SDK copies a response to add its own messages:
  streams/sdk/own_writes.py), so responses may share messages.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from schemas.messages import ChatMessage
from streams.reader.models import ContextResponse

MAX_THREADS = 1024


class KnownMessages:
    def __init__(self, max_threads: int = MAX_THREADS) -> None:
        self._max_threads = max_threads
        self._last: OrderedDict[tuple[str, str], dict[str, tuple[dict[str, Any], ChatMessage]]] = OrderedDict()

    def response(self, body: Any) -> ContextResponse:
        """``ContextResponse.model_validate(body)``, with the messages the thread's last response
        validated from the same JSON taken as they are (``body`` is the parsed answer, changed here)."""
        raws = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(raws, list):
            return ContextResponse.model_validate(body)  # not a context: the model says what is wrong
        ident = (str(body.get("thread_id")), str(body.get("resource_id")))
        known = self._last.get(ident, {})
        kept = []
        for raw in raws:
            hit = known.get(raw.get("id")) if isinstance(raw, dict) else None
            kept.append(hit[1] if hit is not None and hit[0] == raw else raw)
        body["messages"] = kept
        response = ContextResponse.model_validate(body)
        self._last[ident] = {m.id: (raw, m) for raw, m in zip(raws, response.messages, strict=True)}
        self._last.move_to_end(ident)
        while len(self._last) > self._max_threads:
            self._last.popitem(last=False)
        return response
