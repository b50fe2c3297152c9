"""How a tool result reads in the Observer's input (spec §5.1); arguments are ``tool_args.py``.

Mastra 1.31's ``formatToolResultForObserver`` (``tool-result-helpers.ts``), a format fact:

* a string as it is; anything else as ``JSON.stringify(value, null, 2)`` with long
  ``encryptedContent`` strings replaced by a note (``processors.tokens.tool_results``: the token
  counter reads the same text); a missing result (``None``) as nothing;
* cut to a token budget (5,000 by default) with ``\\n... [truncated ~N tokens]``
  (``processors.tokens.truncate``), because a single large payload must not crowd every other
  message out of an Observer call.

A ``type: 'content'`` result has its attachment blocks replaced by placeholders before this
(``result_blocks.py``); what an empty result or a failed call shows is the renderer's rule.
"""

from __future__ import annotations

from typing import Any

from processors.model_port import TokenCounter
from processors.tokens.tool_results import serialize_result
from processors.tokens.truncate import truncate_to_tokens

RESULT_TOKEN_LIMIT = 5_000


def format_tool_result(result: Any, counter: TokenCounter, token_limit: int = RESULT_TOKEN_LIMIT) -> str:
    if result is None:
        return ""
    return truncate_to_tokens(serialize_result(result), token_limit, counter)
