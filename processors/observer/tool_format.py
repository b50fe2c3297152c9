"""How tool calls and results read in the Observer's input (spec §5.1).

Arguments become a bounded breadth-first outline and results are cut to a token budget, because
a single large tool payload must not crowd every other message out of an Observer call.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any, Callable

from processors.model_port import TokenCounter

ARGS_TOKEN_LIMIT = 2_000
RESULT_TOKEN_LIMIT = 5_000
_MAX_DEPTH = 5
_MAX_CHILDREN = 20
_MAX_OUTLINE_ENTRIES = 100
_LONG_STRING = 160
_PREVIEW = 80
_ENCRYPTED_LIMIT = 256
_ATTACHMENT_BLOCKS = {"image-data", "image-url", "media", "file-data", "file-url"}


def format_tool_args(args: Any, counter: TokenCounter, token_limit: int = ARGS_TOKEN_LIMIT) -> str:
    if args is None:
        return "[arguments unavailable]"
    if not isinstance(args, (dict, list)):
        return truncate_to_tokens(_scalar(args), counter, token_limit)
    lines: list[str] = []
    queue: deque[tuple[str, Any, int]] = deque([("", args, 0)])
    while queue and len(lines) < _MAX_OUTLINE_ENTRIES:
        path, value, depth = queue.popleft()
        for key, child in _children(value):
            if len(lines) >= _MAX_OUTLINE_ENTRIES:
                break
            child_path = f"{path}.{key}" if path else str(key)
            if isinstance(child, (dict, list)) and child:
                lines.append(f"{child_path}: [{_container_size(child)}]")
                if depth + 1 < _MAX_DEPTH:
                    queue.append((child_path, child, depth + 1))
            else:
                lines.append(f"{child_path}: {_scalar(child)}")
        hidden = _child_count(value) - _MAX_CHILDREN
        if hidden > 0:
            lines.append(f"{path or '(root)'}: … {hidden} more entries")
    if queue or len(lines) >= _MAX_OUTLINE_ENTRIES:
        lines.append("… outline truncated")
    return truncate_to_tokens("\n".join(lines), counter, token_limit)


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


def _children(value: Any) -> list[tuple[Any, Any]]:
    items = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
    return items[:_MAX_CHILDREN]


def _child_count(value: Any) -> int:
    return len(value) if isinstance(value, (dict, list)) else 0


def _container_size(value: Any) -> str:
    return f"object, {len(value)} keys" if isinstance(value, dict) else f"array, {len(value)} items"


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        if len(value) > _LONG_STRING:
            return f"{json.dumps(value[:_PREVIEW], ensure_ascii=False)}… [string, {len(value)} chars]"
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (dict, list)):
        return "{}" if isinstance(value, dict) else "[]"
    return json.dumps(value, default=str)
