"""SQLite's binary JSON (JSONB, SQLite 3.45+) decoded in Python, for stores read with an older SQLite.

Mastra's LibSQL store writes its ``jsonb`` columns (e.g. ``mastra_threads.metadata``) with
``jsonb(?)``, so they hold JSONB blobs; Python's bundled SQLite may predate ``json()``. Format
(https://sqlite.org/jsonb.html): each element is a header byte — low nibble the type, high nibble the
payload size (0–11 itself; 12/13/14/15: the size follows in 1/2/4/8 big-endian bytes) — then the
payload; arrays and objects hold their elements back to back (an object alternates key, value).
JSON5 number and text forms are read as far as Python's parsers accept them.
"""

from __future__ import annotations

import json
from typing import Any

_NULL, _TRUE, _FALSE, _INT, _INT5, _FLOAT, _FLOAT5 = range(7)
_TEXT, _TEXTJ, _TEXT5, _TEXTRAW, _ARRAY, _OBJECT = range(7, 13)


class JsonbError(ValueError):
    pass


def decode_jsonb(blob: bytes) -> Any:
    value, end = _element(blob, 0)
    if end != len(blob):
        raise JsonbError(f"{len(blob) - end} trailing bytes after the JSONB value")
    return value


def _element(data: bytes, at: int) -> tuple[Any, int]:
    if at >= len(data):
        raise JsonbError("JSONB value ends early")
    header = data[at]
    kind, size_code = header & 0x0F, header >> 4
    at += 1
    if size_code <= 11:
        size = size_code
    else:
        width = 1 << (size_code - 12)
        size = int.from_bytes(data[at:at + width], "big")
        at += width
    payload, end = data[at:at + size], at + size
    if end > len(data):
        raise JsonbError("JSONB payload runs past the end")
    return _value(kind, payload), end


def _value(kind: int, payload: bytes) -> Any:
    if kind == _NULL:
        return None
    if kind in (_TRUE, _FALSE):
        return kind == _TRUE
    if kind == _ARRAY:
        return _sequence(payload)
    if kind == _OBJECT:
        items = _sequence(payload)
        if len(items) % 2:
            raise JsonbError("JSONB object with a key and no value")
        return {items[i]: items[i + 1] for i in range(0, len(items), 2)}
    if kind > _OBJECT:
        raise JsonbError(f"reserved JSONB element type {kind}")
    text = payload.decode("utf-8")
    if kind == _INT:
        return int(text)
    if kind == _INT5:
        return int(text, 16) if text.lower().lstrip("+-").startswith("0x") else int(text)
    if kind in (_FLOAT, _FLOAT5):
        return float(text)
    if kind in (_TEXT, _TEXTRAW):
        return text
    return json.loads(f'"{text}"')


def _sequence(payload: bytes) -> list[Any]:
    items, at = [], 0
    while at < len(payload):
        item, at = _element(payload, at)
        items.append(item)
    return items
