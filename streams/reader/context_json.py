"""A context's HTTP body, written from each message's JSON kept by the message, not the whole
response model dumped again at every new row (issue 19: the reader's lock-held time per read).

A live key's row changes at every write, so its context is assembled and encoded again at the read
after each turn. The window's messages are mostly the same objects as the read before
(streams/reader/context_row.py :meth:`~streams.reader.context_row.ContextRow.inherit`), and a
message's place in the body — its dump in ``messages`` and its ``{role, content}`` in ``chat`` —
depends on the message alone. Rules this file keeps:

* **The same bytes as the model**: ``orjson.dumps(ContextResponse.of(…).model_dump(mode="json",
  exclude_none=False))``, the definition (streams/reader/models.py, which also documents the body in
  ``/openapi.json``); ``tests/unit/test_context_json.py`` compares the two over varied contexts. Keys in
  the model's field order, compact, orjson's escapes; a turn is :func:`processors.context.chat_turn`.
* **Found by the message's identity**, never by its text: an entry holds its message, so the id is not
  reused while the entry lives; messages are not changed after they are decoded (rows share them).
* **Bounded**: at most ``max_bytes`` of JSON, least recently used dropped first (the reader's
  :class:`~streams.reader.byte_lru.ByteLRU`, whose lock lets the loop and executor threads share it).
* **The lean body lists the window as stored** (:func:`stored_context_json`, ``chat=false``, what the
  SDK asks for): each message is its context row's entry (streams/reader/context_row.py
  :meth:`~streams.reader.context_row.ContextRow.entries`), the JSON the reader would otherwise
  validate into the message and dump again. Validated, the body is the model's body without its
  chat (``tests/unit/test_context_json.py``); its bytes are not the model's (no defaults written,
  fields in the stored order). Those new messages were a third of the reader thread's lock time.
"""

from __future__ import annotations

from typing import Any

import orjson

from processors.context import AgentContext, chat_turn
from schemas.messages import ChatMessage
from streams.reader.byte_lru import ByteLRU


class MessageJson:
    """Each message's two pieces, in a :class:`~streams.reader.byte_lru.ByteLRU` under the message's
    id; the entry holds the message, so the id names that message while the entry lives."""

    def __init__(self, max_bytes: int = 16 << 20) -> None:
        self._memo: ByteLRU[tuple[ChatMessage, bytes, bytes]] = ByteLRU(max_bytes)

    def of(self, messages: list[ChatMessage]) -> list[tuple[bytes, bytes]]:
        """Each message's dump and its chat turn, as the response model writes them."""
        return [self._memo.get(id(m), lambda m=m: _pieces(m), _size)[1:] for m in messages]


def _pieces(message: ChatMessage) -> tuple[ChatMessage, bytes, bytes]:
    return message, _dumped(message), orjson.dumps(chat_turn(message))


def _dumped(message: ChatMessage) -> bytes:
    return orjson.dumps(message.model_dump(mode="json", exclude_none=False))


def _size(pieces: tuple[ChatMessage, bytes, bytes]) -> int:
    return len(pieces[1]) + len(pieces[2])


MESSAGES = MessageJson()


def context_json(thread_id: str, resource_id: str, context: AgentContext, known: MessageJson = MESSAGES) -> bytes:
    """The body of ``GET /v1/threads/{thread_id}/context``: the response model's JSON, in one join
    (a long window's body is ~1 MB; each copy of it costs)."""
    conversation = known.of(context.conversation())
    continued = context.continuation is not None
    system = [orjson.dumps(text) for text in context.system]  # the log, ~50 kB: escaped once for both places
    messages: list[bytes] = [b"["]
    _listed(messages, [dumped for dumped, _ in conversation[continued:]])
    messages.append(b"]")
    turns = [b'{"role":"system","content":' + text + b"}" for text in system] + [turn for _, turn in conversation]
    return _framed(thread_id, resource_id, context, system, conversation[0][0] if continued else b"null",
                   messages, turns)


def stored_context_json(thread_id: str, resource_id: str, context: AgentContext, entries: list[dict[str, Any]]) -> bytes:
    """The lean body (``chat`` empty) of a context whose window messages are ``entries``, the row's
    stored JSON of each, in the context's order; only the continuation reminder is a model's dump (a
    new object at each assembly: not kept)."""
    continuation = _dumped(context.continuation) if context.continuation is not None else b"null"
    return _framed(thread_id, resource_id, context, [orjson.dumps(text) for text in context.system], continuation,
                   [orjson.dumps(entries)], [])


def _framed(thread_id: str, resource_id: str, context: AgentContext, system: list[bytes], continuation: bytes,
            messages: list[bytes], chat: list[bytes]) -> bytes:
    """The response model's keys around the encoded pieces (``messages``: a JSON array's pieces), in
    one join: a long window's body is ~1 MB."""
    out = [b'{"thread_id":', orjson.dumps(thread_id), b',"resource_id":', orjson.dumps(resource_id), b',"system":[']
    _listed(out, system)
    out += b'],"continuation":', continuation, b',"messages":', *messages, b',"chat":['
    _listed(out, chat)
    out += b'],"observed_through":', orjson.dumps(context.observed_through), b',"own_messages":[]}'
    return b"".join(out)


def _listed(out: list[bytes], items: list[bytes]) -> None:
    """``items`` into ``out`` with commas between them."""
    for i, item in enumerate(items):
        if i:
            out.append(b",")
        out.append(item)
