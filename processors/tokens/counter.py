"""Message and conversation token counts, in Mastra's accounting (spec §9.1).

A message costs ``round(role + 3.8 + Σ part payloads + Σ overhead deltas + 3.8 × extra messages)``
and a conversation ``24 + Σ messages``. The 3.8/24 overheads stand for the framing providers add;
JSON tool arguments and results get 12 tokens back because the string estimate already counted
their braces and quotes; a tool result or approval reply travels as a message of its own, hence
the extra 3.8. ``data-*`` and reasoning parts are never sent to the model and cost 0.

Only string counting differs between counters (tokenx estimate or a real BPE), so the same
accounting serves all of them. Estimates are remembered in an LRU owned by the counter; messages
are shared event payloads and are never written to. Observation texts are remembered too: a
buffered reflection is counted when it arrives and again as the head of the generation it starts,
and an estimator whose runs never cross whitespace (tokenx) counts paragraphs joined by a blank
line, or lines joined by a newline, as the sum of their counts (:meth:`MessageTokenCounter.count_paragraphs`,
:meth:`MessageTokenCounter.count_joined`), exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import orjson
from pydantic.alias_generators import to_camel

from processors.text.line_memo import LineMemo
from processors.tokens.attachments import ModelContext, estimate_attachment
from processors.tokens.estimate_cache import EstimateCache, client_estimate
from processors.tokens.js_compat import js_round
from processors.tokens.tool_results import (
    count_multimodal,
    has_attachment,
    multimodal_items,
    resolve_result,
    serialize_result,
)
from schemas.messages import (
    ChatMessage,
    DataPart,
    FilePart,
    ImagePart,
    ReasoningPart,
    TextPart,
    ToolInvocationPart,
)

TOKENS_PER_MESSAGE = 3.8
TOKENS_PER_CONVERSATION = 24
JSON_OVERHEAD_CREDIT = 12
_CALL_STATES = frozenset({"call", "partial-call", "approval-requested"})
_DENIED_FALLBACK = "Tool call was not approved by the user"
_ERROR_FALLBACK = "Tool execution failed"
_EMPTY_RESULT = "[empty result]"


class MessageTokenCounter:
    """Mastra's message accounting over a pluggable string counter; see :mod:`processors.tokens`."""

    def __init__(
        self,
        name: str,
        count_string: Callable[[str], int],
        model_context: ModelContext | None = None,
        cache: EstimateCache | None = None,
        *,
        splits_on_whitespace: bool = False,
        line_counts: LineMemo[int] | None = None,
    ) -> None:
        self.name = name
        self._count = count_string
        self._splits_on_whitespace = splits_on_whitespace
        self.model_context = model_context or ModelContext()
        self.estimate_cache = cache or EstimateCache()
        self._role_tokens: dict[str, int] = {}
        self._line_counts: LineMemo[int] = (LineMemo(lambda lines: [self.count_string(x) for x in lines])
                                             if line_counts is None else line_counts)
        # Attachment estimates depend on the model, so their cache kind names it.
        self._attachment_kind_suffix = f"@{self.model_context.provider}/{self.model_context.model_id}"

    def count_string(self, text: str) -> int:
        return self._count(text) if text else 0

    def count_observations(self, text: str) -> int:
        return self._cached("observations", text) if text else 0

    def count_observation_lines(self, text: str) -> int:
        """:meth:`count_observations`, from the text's lines' remembered counts where a text is not
        remembered whole: for a log made mostly of lines counted before (a Reflector's input and its
        candidates repeat the lines that every Observer call's bound counted)."""
        if not text:
            return 0
        return self.estimate_cache.get_or_compute("observations", text, lambda: self.count_joined(text.split("\n")))

    def count_lines(self, lines: Sequence[str]) -> list[int]:
        """Each line's :meth:`count_string`, remembered by line (processors/text/line_memo.py): an Observer
        call bounds the prior log line by line (spec §5.2), and a log's lines are the same from one
        call to the next."""
        return self._line_counts(lines)

    def count_joined(self, lines: Sequence[str]) -> int:
        """``count_string("\n".join(lines))``: the sum of the lines' remembered counts when the string
        counter splits on whitespace (no run spans a newline)."""
        if self._splits_on_whitespace:
            return sum(self.count_lines(lines))
        return self.count_string("\n".join(lines))

    def count_paragraphs(self, paragraphs: Sequence[str]) -> int:
        """``count_observations("\\n\\n".join(paragraphs))``, from the paragraphs' own counts when the
        string counter splits on whitespace (a run never spans the blank line between them)."""
        if self._splits_on_whitespace:
            return sum(self.count_observations(paragraph) for paragraph in paragraphs)
        return self.count_observations("\n\n".join(paragraphs))

    def count_messages(self, msgs: Sequence[ChatMessage]) -> int:
        if not msgs:
            return 0
        return TOKENS_PER_CONVERSATION + sum(self.count_message(msg) for msg in msgs)

    def count_message(self, msg: ChatMessage) -> int:
        payload = self._role(msg.role)
        overhead = TOKENS_PER_MESSAGE
        extra_messages = 0
        for part in msg.parts:
            if isinstance(part, TextPart):
                payload += self._cached("text", part.text)
            elif isinstance(part, (DataPart, ReasoningPart)):
                continue
            elif isinstance(part, (ImagePart, FilePart)):
                payload += self._attachment(part)
            elif isinstance(part, ToolInvocationPart):
                tokens, credit, extra = self._tool_invocation(part)
                payload += tokens
                overhead -= credit
                extra_messages += extra
            else:
                payload += self._cached(f"part-{part.type}", _compact_json(_mastra_shape(part)))
        if extra_messages:
            overhead += extra_messages * TOKENS_PER_MESSAGE
        return js_round(payload + overhead)

    def _role(self, role: str) -> int:
        tokens = self._role_tokens.get(role)
        if tokens is None:
            tokens = self._role_tokens[role] = self.count_string(role)
        return tokens

    def _cached(self, kind: str, payload: str) -> float:
        return self.estimate_cache.get_or_compute(kind, payload, lambda: self.count_string(payload))

    def _attachment(self, part: ImagePart | FilePart) -> float:
        supplied = client_estimate(part.token_estimate())
        if supplied is not None:
            return supplied
        shape = _mastra_shape(part)
        return self.estimate_cache.get_or_compute(
            part.type + self._attachment_kind_suffix,
            orjson.dumps(shape, option=orjson.OPT_SORT_KEYS),
            lambda: estimate_attachment(shape, self.model_context, self.count_string),
        )

    def _tool_invocation(self, part: ToolInvocationPart) -> tuple[float, int, int]:
        """``(payload tokens, overhead credit, extra messages)`` for one tool invocation part."""
        tokens, credit = self._call_signature(part)
        state = part.state
        if state in _CALL_STATES:
            return tokens, credit, 0
        if state == "approval-responded":
            if part.approval_reason:
                tokens += self._cached("tool-approval-reason", part.approval_reason)
        elif state == "output-denied":
            reason = part.approval_reason if (part.approval_reason or "").strip() else _DENIED_FALLBACK
            tokens += self._cached("tool-result-denied", reason)
        elif state == "output-error":
            tokens += self._cached("tool-result-error", _error_text(part))
        else:
            result_tokens, result_credit = self._tool_result(part)
            tokens += result_tokens
            credit += result_credit
        return tokens, credit, 1

    def _call_signature(self, part: ToolInvocationPart) -> tuple[float, int]:
        """Name and arguments: every state of an invocation keeps them in the context window."""
        tokens: float = 0
        credit = 0
        if part.tool_name:
            tokens += self._cached("tool-call-name", part.tool_name)
        if isinstance(part.args, str):
            tokens += self._cached("tool-call-args", part.args)
        elif part.args is not None:
            tokens += self._cached("tool-call-args-json", _compact_json(part.args))
            credit += JSON_OVERHEAD_CREDIT
        return tokens, credit

    def _tool_result(self, part: ToolInvocationPart) -> tuple[float, int]:
        value, is_model_output = resolve_result(part.provider_metadata, part.result)
        present = value is not None or is_model_output  # a stored model output may be JSON null
        if not present or (isinstance(value, str) and not value.strip()):
            if _extra(part, "is_error"):
                return self._cached("tool-result-error", _error_text(part)), 0
            return self._cached("tool-result-json", _EMPTY_RESULT), 0
        formatted = serialize_result(value)
        items = multimodal_items(value)
        if items is not None and has_attachment(items):
            tokens = self.estimate_cache.get_or_compute(
                "tool-result-multimodal-content",
                formatted,
                lambda: count_multimodal(items, self.model_context, self.count_string),
            )
        else:
            kind = "tool-result-model-output-json" if is_model_output else "tool-result-json"
            tokens = self._cached(kind, formatted)
        return tokens, 0 if isinstance(value, str) else JSON_OVERHEAD_CREDIT


def _error_text(part: ToolInvocationPart) -> str:
    return part.error_text if (part.error_text or "").strip() else _ERROR_FALLBACK


def _extra(part: Any, snake_name: str) -> Any:
    """An undeclared field, sent in either spelling."""
    extras = part.model_extra or {}
    return extras.get(snake_name, extras.get(to_camel(snake_name)))


def _mastra_shape(part: Any) -> dict[str, Any]:
    """The part as Mastra would hold it (camelCase keys), minus any cached or supplied estimate."""
    shape = {to_camel(key): value for key, value in part.model_dump(exclude_none=True).items()}
    metadata = shape.get("providerMetadata")
    mastra = metadata.get("mastra") if isinstance(metadata, dict) else None
    if isinstance(mastra, dict) and "tokenEstimate" in mastra:
        mastra = {key: value for key, value in mastra.items() if key != "tokenEstimate"}
        metadata = {key: value for key, value in metadata.items() if key != "mastra"}
        if mastra:
            metadata["mastra"] = mastra
        if metadata:
            shape["providerMetadata"] = metadata
        else:
            del shape["providerMetadata"]
    return shape


def _compact_json(value: Any) -> str:
    """``JSON.stringify`` spacing (none), non-ASCII kept as is."""
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return str(value)
