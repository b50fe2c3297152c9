"""What an attachment's ``image``/``data`` string holds: a URL, a data: URI or raw base64.

The heuristics only need two facts about the body, its byte size and (for images) its header, and
both must come from the string itself: the core never fetches a URL. The size is computed from
the base64 length without decoding, as Mastra does, so a 2 MB upload costs no allocation.
"""

from __future__ import annotations

import binascii
import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote_to_bytes, urlsplit

from processors.tokens.image_size import image_dimensions
from processors.tokens.js_compat import JS_WHITESPACE

_HTTP_URL = re.compile(r"^https?://", re.IGNORECASE)
_BASE64_BODY = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_WINDOWS_PATH = re.compile(r"[A-Za-z]:[\\/]")
_JS_SPACE = re.compile(f"[{JS_WHITESPACE}]+")
# Enough base64 for any PNG/GIF/WebP header and for JPEGs whose frame header follows ordinary
# EXIF/ICC segments; bigger prefixes are decoded only when the first one ends inside a JPEG.
_HEADER_BASE64_CHARS = 96 * 1024

SourceKind = Literal["url", "data-uri", "binary"]


@dataclass(frozen=True)
class AssetStats:
    source: SourceKind
    size_bytes: int | None  # None: nothing measurable (a URL)


def is_http_url(value: object) -> bool:
    return isinstance(value, str) and _HTTP_URL.match(value) is not None


def asset_stats(asset: object) -> AssetStats:
    if not isinstance(asset, str):
        return AssetStats("binary", None)
    if is_http_url(asset):
        return AssetStats("url", None)
    if asset.startswith("data:"):
        comma = asset.find(",")
        return AssetStats("data-uri", base64_size(asset[comma + 1 :] if comma != -1 else ""))
    return AssetStats("binary", base64_size(asset))


def base64_size(text: str) -> int:
    """Decoded size of a base64 string (whatever it really holds: Mastra's rule for any body)."""
    # Testing each character with ``in`` is ~50x faster than a regex scan over megabytes.
    compact = _JS_SPACE.sub("", text) if any(char in text for char in JS_WHITESPACE) else text
    padding = 2 if compact.endswith("==") else 1 if compact.endswith("=") else 0
    return max(0, len(compact) * 3 // 4 - padding)


def inline_image_dimensions(asset: object) -> tuple[int, int] | None:
    """Dimensions read from inline bytes (data: URI or bare base64); ``None`` for URLs or non-images."""
    if not isinstance(asset, str) or is_http_url(asset):
        return None
    if asset.startswith("data:"):
        comma = asset.find(",")
        if comma == -1:
            return None
        header, payload = asset[:comma], asset[comma + 1 :]
        if ";base64" not in header.lower():
            return image_dimensions(unquote_to_bytes(payload))
        return _dimensions_from_base64(payload)
    if not _looks_like_base64(asset):
        return None
    return _dimensions_from_base64(asset)


def filename_from_url(asset: object) -> str | None:
    """The last path segment of an http(s) URL, percent-decoded: a file's name when none is given."""
    if not is_http_url(asset):
        return None
    try:
        path = urlsplit(str(asset)).path
    except ValueError:
        return None
    segments = [segment for segment in path.split("/") if segment]
    return unquote_to_bytes(segments[-1]).decode("utf-8", "replace") if segments else None


def _looks_like_base64(value: str) -> bool:
    if len(value) < 16 or len(value) % 4 or _looks_like_path(value):
        return False
    return _BASE64_BODY.fullmatch(value) is not None


def _looks_like_path(value: str) -> bool:
    return (
        value.startswith(("/", "./", "../", "~/"))
        or _WINDOWS_PATH.match(value) is not None
        or "\\" in value
    )


def _dimensions_from_base64(payload: str) -> tuple[int, int] | None:
    prefix_len = _HEADER_BASE64_CHARS
    while True:
        prefix = payload[:prefix_len]
        try:
            data = binascii.a2b_base64(prefix[: len(prefix) - len(prefix) % 4] or prefix)
        except binascii.Error:
            return None
        size = image_dimensions(data)
        if size is not None or prefix_len >= len(payload) or not data.startswith(b"\xff\xd8"):
            return size
        prefix_len *= 4
