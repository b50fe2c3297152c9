"""Token estimates for image and file parts, per provider, without looking at a network.

A provider bills an image by its pixel size (tiles, megapixels) or a fixed rate, not by its bytes,
so counting the JSON of a base64 blob would be off by orders of magnitude either way. These rules
reproduce Mastra's local heuristics (spec §9.2): dimensions come from metadata or from the inline
bytes' header, else size-based guesses, else a per-provider default. Files that are not images are
charged by byte size, or by a short descriptor when only a URL is known.

Parts arrive as Mastra-shaped mappings (camelCase keys, extra fields kept) so that the same code
serves message parts and the attachments nested inside multimodal tool results.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import orjson

from processors.tokens.inline_assets import (
    AssetStats,
    asset_stats,
    filename_from_url,
    inline_image_dimensions,
    is_http_url,
)
from processors.tokens.js_compat import js_round

_KB = 1024
_MB = 1024 * 1024
_IMAGE_EXTENSIONS = frozenset(
    {"png", "jpg", "jpeg", "webp", "gif", "bmp", "tiff", "tif", "heic", "heif", "avif"}
)
_EXTENSION = re.compile(r"\.([a-z0-9]+)$", re.IGNORECASE)
_GEMINI_3_TOKENS = {"low": 280, "medium": 560, "high": 1120, "ultra_high": 2240, "unspecified": 1120}
_GOOGLE_TILE_TOKENS = 258
_ANTHROPIC_MAX_EDGE = 1568
_ANTHROPIC_TOKENS_PER_PIXEL = 1 / 750


@dataclass(frozen=True)
class ModelContext:
    """The model whose billing rules apply: the actor's model during a step."""

    provider: str | None = None
    model_id: str | None = None

    @classmethod
    def parse(cls, model: str | None) -> ModelContext:
        """``"provider/modelId"``; a string without a slash is a bare model id."""
        if not model:
            return cls()
        provider, slash, model_id = model.partition("/")
        return cls(provider, model_id) if slash else cls(None, model)

    @property
    def provider_id(self) -> str | None:
        return self.provider.lower() if self.provider else None

    @property
    def model_key(self) -> str:
        return (self.model_id or "").lower()


@dataclass(frozen=True)
class _TileRates:
    base: int
    tile: int
    fallback_tiles: int


def estimate_attachment(
    part: Mapping[str, Any], context: ModelContext, count_string: Callable[[str], int]
) -> int:
    """Tokens for an ``image`` or ``file`` part (client estimates are the caller's business)."""
    if part.get("type") == "image":
        return _image_tokens(part, part.get("image"), context)
    if is_image_like_file(part):
        return _image_tokens(part, part.get("data"), context)
    stats = asset_stats(part.get("data"))
    if stats.size_bytes is not None:
        return _file_tokens_from_bytes(context.provider_id, _mime_type(part), stats.size_bytes)
    return count_string(file_descriptor(part))


def is_image_like_file(part: Mapping[str, Any]) -> bool:
    """A ``file`` part that a model will see as an image: by MIME type, data: URI or extension."""
    if part.get("type") != "file":
        return False
    mime = part.get("mimeType")
    if isinstance(mime, str) and mime.lower().startswith("image/"):
        return True
    data = part.get("data")
    if isinstance(data, str) and data.startswith("data:image/"):
        return True
    if is_http_url(data):
        try:
            if _has_image_extension(urlsplit(data).path):
                return True
        except ValueError:
            pass
    return _has_image_extension(part.get("filename"))


def file_descriptor(part: Mapping[str, Any]) -> str:
    """What a URL-only file costs in context: its type, MIME type and name, as compact JSON."""
    return orjson.dumps(
        {"type": "file", "mimeType": part.get("mimeType"), "filename": _filename(part)}
    ).decode()


def _image_tokens(part: Mapping[str, Any], asset: Any, context: ModelContext) -> int:
    width, height = _dimensions(part, asset)
    stats = asset_stats(asset)
    provider = context.provider_id
    if provider == "google":
        if context.model_key.startswith("gemini-3"):
            return _GEMINI_3_TOKENS[_media_resolution(part)]
        tiles = math.ceil(width / 768) * math.ceil(height / 768) if width and height else 1
        return max(1, tiles) * _GOOGLE_TILE_TOKENS
    if provider == "anthropic":
        return _anthropic_image_tokens(width, height, stats)
    rates = _openai_rates(context.model_key)
    detail = _effective_detail(_image_detail(part), width, height, stats)
    tiles = _high_detail_tiles(width, height, stats, rates) if detail == "high" else 0
    return rates.base + tiles * rates.tile


def _dimensions(part: Mapping[str, Any], asset: Any) -> tuple[float | None, float | None]:
    """Declared dimensions win; the inline bytes' header fills whatever is missing."""
    declared = _get(_get(part.get("providerMetadata"), "mastra"), "imageDimensions")
    width = _first_positive(part.get("width"), part.get("imageWidth"), _get(declared, "width"))
    height = _first_positive(part.get("height"), part.get("imageHeight"), _get(declared, "height"))
    if width and height:
        return width, height
    measured = inline_image_dimensions(asset)
    if measured is None:
        return width, height
    return width or measured[0], height or measured[1]


def _openai_rates(model: str) -> _TileRates:
    if model.startswith("gpt-5"):
        return _TileRates(70, 140, 4)
    if model.startswith("gpt-4o-mini"):
        return _TileRates(2833, 5667, 1)
    if model.startswith(("o1", "o3")):
        return _TileRates(75, 150, 4)
    if "computer-use" in model:
        return _TileRates(65, 129, 4)
    return _TileRates(85, 170, 4)


def _image_detail(part: Mapping[str, Any]) -> str:
    openai_options = _get(part.get("providerOptions"), "openai")
    metadata = part.get("providerMetadata")
    openai_metadata = _get(metadata, "openai")
    detail = _first_present(
        part.get("detail"),
        part.get("imageDetail"),
        _get(openai_options, "detail"),
        _get(openai_options, "imageDetail"),
        _get(openai_metadata, "detail"),
        _get(openai_metadata, "imageDetail"),
        _get(_get(metadata, "mastra"), "imageDetail"),
    )
    return detail if detail in ("low", "high") else "auto"


def _effective_detail(
    detail: str, width: float | None, height: float | None, stats: AssetStats
) -> str:
    """``auto`` means high detail for big images: a side > 768 px, or > 1 MB if only size is known."""
    if detail != "auto":
        return detail
    if width and height:
        return "high" if max(width, height) > 768 else "low"
    if stats.size_bytes is not None:
        return "high" if stats.size_bytes > _MB else "low"
    return "low"


def _high_detail_tiles(
    width: float | None, height: float | None, stats: AssetStats, rates: _TileRates
) -> int:
    if width and height:
        largest = max(width, height)
        if largest > 2048:
            width, height = width * (2048 / largest), height * (2048 / largest)
        shortest = min(width, height)
        if shortest > 768:
            width, height = width * (768 / shortest), height * (768 / shortest)
        scaled_w, scaled_h = max(1, js_round(width)), max(1, js_round(height))
        return max(1, math.ceil(scaled_w / 512) * math.ceil(scaled_h / 512))
    if stats.size_bytes is not None:
        return _by_size(stats.size_bytes, (1, 4, 6, 8))
    return rates.fallback_tiles


def _anthropic_image_tokens(
    width: float | None, height: float | None, stats: AssetStats
) -> int:
    if width and height:
        largest = max(width, height)
        if largest > _ANTHROPIC_MAX_EDGE:
            ratio = _ANTHROPIC_MAX_EDGE / largest
            width, height = max(1, js_round(width * ratio)), max(1, js_round(height * ratio))
        return max(1, math.ceil(width * height * _ANTHROPIC_TOKENS_PER_PIXEL))
    if stats.size_bytes is not None:
        return _by_size(stats.size_bytes, (341, 1366, 2048, 2731))
    return 1600


def _by_size(size_bytes: int, values: tuple[int, int, int, int]) -> int:
    """One of four values for bodies up to 512 KB, 2 MB, 4 MB, and beyond."""
    for limit, value in zip((512 * _KB, 2 * _MB, 4 * _MB), values):
        if size_bytes <= limit:
            return value
    return values[3]


def _file_tokens_from_bytes(provider: str | None, mime_type: str, size_bytes: int) -> int:
    """PDF pages cost what each provider charges per ~5 KB page; anything else ~4 bytes a token."""
    mime = mime_type.lower().split(";", 1)[0].strip()
    if mime == "application/pdf":
        if provider == "google":
            return max(258, math.ceil(size_bytes / 20))
        if provider == "anthropic":
            return max(1500, math.ceil(size_bytes / 3))
        return max(500, math.ceil(size_bytes / 4))
    return max(1, math.ceil(size_bytes / 4))


def _media_resolution(part: Mapping[str, Any]) -> str:
    metadata = part.get("providerMetadata")
    for value in (
        part.get("mediaResolution"),
        _get(_get(part.get("providerOptions"), "google"), "mediaResolution"),
        _get(_get(metadata, "google"), "mediaResolution"),
        _get(_get(metadata, "mastra"), "mediaResolution"),
    ):
        if isinstance(value, str) and value in _GEMINI_3_TOKENS:
            return value
    return "unspecified"


def _mime_type(part: Mapping[str, Any]) -> str:
    mime = part.get("mimeType")
    if isinstance(mime, str) and mime.strip():
        return mime.strip()
    asset = _first_present(part.get("data"), part.get("image"))
    if isinstance(asset, str) and asset.startswith("data:"):
        ends = [index for index in (asset.find(";"), asset.find(",")) if index != -1]
        if ends and min(ends) > 5:
            return asset[5 : min(ends)]
    return "application/octet-stream"


def _filename(part: Mapping[str, Any]) -> str | None:
    name = part.get("filename")
    if isinstance(name, str) and name.strip():
        return name.strip()
    return filename_from_url(part.get("data"))


def _has_image_extension(name: Any) -> bool:
    if not isinstance(name, str):
        return False
    match = _EXTENSION.search(name.split("#", 1)[0].split("?", 1)[0])
    return match is not None and match.group(1).lower() in _IMAGE_EXTENSIONS


def _first_positive(*values: Any) -> float | None:
    """The first finite number > 0 (a declared dimension that can be trusted)."""
    for value in values:
        is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if is_number and math.isfinite(value) and value > 0:
            return value
    return None


def _get(mapping: Any, key: str) -> Any:
    return mapping.get(key) if isinstance(mapping, Mapping) else None


def _first_present(*values: Any) -> Any:
    """JavaScript's ``a ?? b ?? ...``: the first value that is not null/undefined."""
    return next((value for value in values if value is not None), None)
