"""The three contexts a reader model answers from, and the reader's call.

* ``om``: the OM context as the reader endpoint serves it (observations, hints, unobserved messages);
* ``full``: every message of the conversation;
* ``recent``: the newest messages that fit in the OM context's token count — what the same budget
  buys without memory.

History messages carry their date and time (``[8 May 2024 13:56]``) so that dated questions are
fair to the two baselines; the OM context dates its observations itself.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from processors.model_port import ModelCall, ModelClient, TokenCounter
from streams.eval.datasets import Conversation, Question

CONDITIONS = ("om", "full", "recent")
READER_SYSTEM = ("The messages below are your memory of a conversation with a user. Answer the question "
                 "from that memory with a short phrase: a name, a place, a date, a number or a few words, "
                 "no explanation. When the memory changed over time, give the latest value unless asked "
                 "otherwise. If the memory does not say, answer: unknown.")


READER_CAP = 64  # a short phrase is asked for; a rambling answer is scored on its start, not failed


@dataclass(frozen=True)
class Answered:
    text: str
    context_tokens: int
    latency_ms: int
    input_tokens: int
    output_tokens: int


def history(conversation: Conversation) -> list[dict[str, Any]]:
    return [{"role": t.role, "content": f"[{_when(t.at)}] {t.text}"} for t in conversation.turns]


def recent(messages: list[dict[str, Any]], budget: int, counter: TokenCounter) -> list[dict[str, Any]]:
    kept: list[dict[str, Any]] = []
    used = 0
    for message in reversed(messages):
        cost = counter.count_string(message["content"])
        if used + cost > budget:
            break
        kept.append(message)
        used += cost
    return kept[::-1]


def chat_tokens(messages: list[dict[str, Any]], counter: TokenCounter) -> int:
    return sum(counter.count_string(str(m["content"])) for m in messages)


async def ask(llm: ModelClient, model: str, context: list[dict[str, Any]], question: Question, now_ms: int,
              counter: TokenCounter) -> Answered:
    asked_at = question.asked_at or now_ms
    prompt = [{"role": "system", "content": READER_SYSTEM}, *context,
              {"role": "user", "content": f"Today is {_when(asked_at)}.\nQuestion: {question.question}"}]
    started = time.monotonic()
    reply = await llm.complete(ModelCall(role="reader", model=model, messages=prompt, max_output_tokens=READER_CAP,
                                         cut_off_ok=True))
    latency = int((time.monotonic() - started) * 1000)
    return Answered(reply.text.strip(), chat_tokens(context, counter), latency, reply.usage.input_tokens,
                    reply.usage.output_tokens)


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%-d %b %Y %H:%M")
