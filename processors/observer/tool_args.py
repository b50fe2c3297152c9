"""Tool-call arguments as the Observer reads them (spec §5.1): the format of Mastra 1.31.0.

The format is a fact the model is shown, so it follows Mastra's exactly:

* A breadth-first outline, one ``path: value`` line per field: object keys as ``a.b`` (a key that
  is not an identifier as ``a.["my key"]``), array items as ``a[0]``, containers as ``<object>`` /
  ``<array, N items>``, empties as ``[empty object]``. At most 20 entries per container (a
  ``... [additional entries omitted]`` line says so), 100 outline entries, depth 5, paths of 160
  characters (longer ones keep head and tail around a digest).
* A string over 160 characters shows as ``<string, N characters; preview size-limited>`` in the
  outline; after a ``Large string previews (size-limited):`` header each gets a ``  | `` indented
  preview, the previews sharing what is left of the budget equally.
* The budget is 2,000 tokens (no character limit unless the caller gives one, as Mastra's Observer
  call gives none): an outline over it keeps the shallowest, smallest lines and says so; a preview
  is cut to the longest prefix that fits, with ``... [N characters omitted]``. Hence a single long
  argument is previewed to ~2,000 tokens, not to a fixed number of characters.

Lengths are JavaScript string lengths (UTF-16 units), as Mastra measures them.
"""

from __future__ import annotations

import json
import math
import re
from collections import deque
from dataclasses import dataclass
from typing import Any

from processors.model_port import TokenCounter
from processors.tokens.js_compat import is_array_index, js_number, utf16_length

ARGS_TOKEN_LIMIT = 2_000
INLINE_STRING_CHARS = 160
MAX_DEPTH = 5
MAX_ENTRIES_PER_CONTAINER = 20
MAX_OUTLINE_ENTRIES = 100
MAX_PATH_CHARS = 160
UNAVAILABLE = "[arguments unavailable]"
_FIELDS_OMITTED = "... [additional argument fields omitted by size limit]"
_NESTED_OMITTED = "... [additional nested entries omitted by structure limit]"
_PREVIEW_HEADER = "Large string previews (size-limited):"
_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")


@dataclass(frozen=True)
class _Limits:
    tokens: float
    chars: float


@dataclass(frozen=True)
class _Line:
    text: str
    depth: float
    order: int


def format_tool_args(
    args: Any, counter: TokenCounter, token_limit: int = ARGS_TOKEN_LIMIT, char_limit: int | None = None
) -> str:
    limits = _Limits(token_limit, math.inf if not char_limit else char_limit)
    if args is None:
        return UNAVAILABLE if char_limit is None or len(UNAVAILABLE) <= char_limit else _cut(UNAVAILABLE, char_limit)
    fits = _fitter(counter)
    if limits.tokens <= 0 or limits.chars <= 0:
        return ""
    if not isinstance(args, (dict, list)):
        return _scalar_args(args, limits, fits, counter)
    outline, previews = _outline(args)
    if not previews:
        return _select(outline, limits, fits, counter)
    return _with_previews(_select(outline, limits, fits, counter), previews, limits, fits, counter)


def _scalar_args(value: Any, limits: _Limits, fits, counter: TokenCounter) -> str:
    if not isinstance(value, str) or utf16_length(value) <= INLINE_STRING_CHARS:
        text = _primitive(value)
        return text if fits(text, limits) else ("…" if fits("…", limits) else "")
    summary = f"<string, {utf16_length(value)} characters; preview size-limited>"
    rendered = _append(summary, _preview("preview", value, limits, fits, summary), limits, fits)
    if rendered:
        return rendered
    return summary if fits(summary, limits) else ("…" if fits("…", limits) else "")


def _outline(args: dict | list) -> tuple[list[_Line], list[tuple[str, str]]]:
    lines: list[_Line] = []
    previews: list[tuple[str, str]] = []
    pending: deque[tuple[str, Any, int]] = deque([("", args, 0)])
    structural_limit = False
    while pending and len(lines) < MAX_OUTLINE_ENTRIES:
        path, value, depth = pending.popleft()
        entries, has_more = _entries(value)
        is_list = isinstance(value, list)
        if not entries and not has_more:
            lines.append(_Line(f"{path or 'arguments'}: [empty {'array' if is_list else 'object'}]", depth, len(lines)))
            continue
        if has_more:
            label = path or ("items" if is_list else "fields")
            lines.append(_Line(f"{label}: ... [additional entries omitted]", depth, len(lines)))
        for key, child in entries:
            if len(lines) >= MAX_OUTLINE_ENTRIES:
                structural_limit = True
                break
            child_path = _path(path, key, is_list)
            if isinstance(child, str) and utf16_length(child) > INLINE_STRING_CHARS:
                text = f"{child_path}: <string, {utf16_length(child)} characters; preview size-limited>"
                previews.append((child_path, child))
            elif not isinstance(child, (dict, list)):
                text = f"{child_path}: {_primitive(child)}"
            elif depth >= MAX_DEPTH:
                text = f"{child_path}: {_summary(child)} [max depth reached]"
            else:
                text = f"{child_path}: {_summary(child)}"
                pending.append((child_path, child, depth + 1))
            lines.append(_Line(text, depth, len(lines)))
    if pending or structural_limit:
        lines.append(_Line(_NESTED_OMITTED, math.inf, len(lines)))
    return lines, previews


def _entries(value: dict | list) -> tuple[list[tuple[Any, Any]], bool]:
    """The first 20 entries, in JavaScript's key order (array-index keys first, ascending)."""
    if isinstance(value, list):
        items = list(enumerate(value))
    else:
        indices = sorted((k for k in value if is_array_index(k)), key=lambda k: int(k))
        items = [(k, value[k]) for k in indices] + [(k, v) for k, v in value.items() if not is_array_index(k)]
    return items[:MAX_ENTRIES_PER_CONTAINER], len(items) > MAX_ENTRIES_PER_CONTAINER


def _select(lines: list[_Line], limits: _Limits, fits, counter: TokenCounter) -> str:
    """All lines if they fit; else the shallowest, smallest ones that fit, plus a marker."""
    everything = _join(lines)
    if fits(everything, limits):
        return everything
    chosen: list[_Line] = []
    by_size = sorted(lines, key=lambda l: (l.depth, counter.count_string(l.text), utf16_length(l.text), l.order))
    for line in by_size:
        if fits(_join([*chosen, line], _FIELDS_OMITTED), limits):
            chosen.append(line)
    rendered = _join(chosen, _FIELDS_OMITTED)
    if fits(rendered, limits):
        return rendered
    if fits(_FIELDS_OMITTED, limits):
        return _FIELDS_OMITTED
    return "…" if fits("…", limits) else ""


def _with_previews(outline: str, previews: list[tuple[str, str]], limits: _Limits, fits, counter: TokenCounter) -> str:
    rendered = _append(outline, _PREVIEW_HEADER, limits, fits)
    if rendered is None:
        return outline
    shown = omitted = 0
    for index, (path, value) in enumerate(previews):
        remaining = len(previews) - index
        used_tokens, used_chars = counter.count_string(rendered), utf16_length(rendered)
        share = _Limits(
            used_tokens + max(0, limits.tokens - used_tokens) // remaining,
            used_chars + 1 + _share(max(0, limits.chars - used_chars - 1), remaining),
        )
        preview = _preview(path, value, share, fits, rendered)
        extended = _append(rendered, preview, limits, fits) if preview else None
        if extended is None:
            omitted += 1
            continue
        rendered, shown = extended, shown + 1
    if shown == 0:
        return outline
    if omitted:
        note = f"... [{omitted} large string {'preview' if omitted == 1 else 'previews'} omitted]"
        rendered = _append(rendered, note, limits, fits) or rendered
    return rendered


def _preview(path: str, value: str, limits: _Limits, fits, prefix: str = "") -> str:
    """``path:`` and the longest ``  | ``-indented prefix of ``value`` that fits after ``prefix``."""
    total = utf16_length(value)

    def block(visible: str) -> str:
        body = "\n".join(f"  | {line}" for line in visible.split("\n"))
        hidden = total - utf16_length(visible)
        return f"{path}:\n{body}" + (f"\n  | ... [{hidden} characters omitted]" if hidden > 0 else "")

    low, high, best = 0, len(value), ""
    while low <= high:
        middle = (low + high) // 2
        candidate = block(value[:middle])
        if fits(f"{prefix}\n{candidate}" if prefix else candidate, limits):
            best, low = candidate, middle + 1
        else:
            high = middle - 1
    return best


def _path(parent: str, key: Any, in_list: bool) -> str:
    if in_list:
        return _short_path(f"{parent}[{key}]")
    name = str(key)
    segment = name if _IDENTIFIER.match(name) else f"[{json.dumps(name, ensure_ascii=False)}]"
    return _short_path(f"{parent}.{segment}" if parent else segment)


def _short_path(path: str) -> str:
    length = utf16_length(path)
    if length <= MAX_PATH_CHARS:
        return path
    units = path.encode("utf-16-le")
    head = units[: 50 * 2].decode("utf-16-le", errors="ignore")
    tail = units[-60 * 2 :].decode("utf-16-le", errors="ignore")
    return f"{head}…[{length - 110} chars; {_fnv1a(units)}]…{tail}"


def _fnv1a(utf16_units: bytes) -> str:
    value = 0x811C9DC5
    for index in range(0, len(utf16_units), 2):
        unit = int.from_bytes(utf16_units[index : index + 2], "little")
        value = ((value ^ unit) * 0x01000193) & 0xFFFFFFFF
    return f"{value:08x}"


def _summary(value: dict | list) -> str:
    if isinstance(value, dict):
        return "<object>"
    return f"<array, {len(value)} {'item' if len(value) == 1 else 'items'}>"


def _primitive(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return js_number(value)
    return json.dumps(str(value), ensure_ascii=False)


def _join(lines: list[_Line], marker: str | None = None) -> str:
    texts = [line.text for line in sorted(lines, key=lambda l: l.order)]
    return "\n".join([*texts, marker] if marker else texts)


def _append(base: str, addition: str, limits: _Limits, fits) -> str | None:
    if not addition:
        return None
    candidate = f"{base}\n{addition}" if base else addition
    return candidate if fits(candidate, limits) else None


def _share(room: float, parts: int) -> float:
    return room if math.isinf(room) else room // parts


def _fitter(counter: TokenCounter):
    def fits(text: str, limits: _Limits) -> bool:
        return utf16_length(text) <= limits.chars and counter.count_string(text) <= limits.tokens

    return fits


def _cut(text: str, limit: int) -> str:
    return f"{text[:limit]}\n... [truncated {len(text) - limit} characters]"
