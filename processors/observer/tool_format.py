"""How tool results read in the Observer's input (spec §5.1); arguments are ``tool_args.py``.

Results are cut to a token budget, because a single large tool payload must not crowd every
other message out of an Observer call.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from processors.model_port import TokenCounter

RESULT_TOKEN_LIMIT = 5_000
_ENCRYPTED_LIMIT = 256
_ATTACHMENT_BLOCKS = {"image-data", "image-url", "media", "file-data", "file-url"}


def format_tool_result(
    result: Any,
    counter: TokenCounter,
    on_attachment: Callable[[dict[str, Any]], str] | None = None,
    token_limit: int = RESULT_TOKEN_LIMIT,
) -> str:
    """Strings verbatim, objects as indented JSON; attachment blocks become placeholders."""
    if isinstance(result, dict) and result.get("type") == "content" and isinstance(result.get("value"), list):
        text = "\n".join(_content_item(item, on_attachment) for item in result["value"])
    elif isinstance(result, str):
        text = result
    elif result is None:
        text = ""
    else:
        text = json.dumps(_strip_encrypted(result), indent=2, ensure_ascii=False, default=str)
    if not text.strip():
        return "[empty result]"
    return truncate_to_tokens(text, counter, token_limit)


def truncate_to_tokens(text: str, counter: TokenCounter, token_limit: int) -> str:
    """The longest prefix within ``token_limit`` tokens (binary search), with a note of the rest."""
    total = counter.count_string(text)
    if total <= token_limit:
        return text
    low, high = 0, len(text)
    while low < high:
        mid = (low + high + 1) // 2
        if counter.count_string(text[:mid]) <= token_limit:
            low = mid
        else:
            high = mid - 1
    kept = text[:low]
    return f"{kept}... [truncated ~{total - counter.count_string(kept)} tokens]"


def _content_item(item: Any, on_attachment: Callable[[dict[str, Any]], str] | None) -> str:
    if isinstance(item, dict) and item.get("type") in _ATTACHMENT_BLOCKS:
        return on_attachment(item) if on_attachment else f"[{item['type']}]"
    if isinstance(item, dict) and item.get("type") == "text":
        return str(item.get("text", ""))
    return json.dumps(_strip_encrypted(item), indent=2, ensure_ascii=False, default=str)


def _strip_encrypted(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: (
                f"[stripped encryptedContent: {len(child)} characters]"
                if key == "encryptedContent" and isinstance(child, str) and len(child) > _ENCRYPTED_LIMIT
                else _strip_encrypted(child)
            )
            for key, child in value.items()
        }
    if isinstance(value, list):
        return [_strip_encrypted(child) for child in value]
    return value
