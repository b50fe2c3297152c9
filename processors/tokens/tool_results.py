"""How much of a tool result sits in the model's context window.

Three rules keep the count honest (spec §9.1):

* what the model saw wins: ``providerMetadata.mastra.modelOutput``, when present, replaces the raw
  result (tools may map a large result to a small model output);
* provider-encrypted blobs (``encryptedContent`` strings over 256 characters, counted in UTF-16
  units as JavaScript counts them) are opaque ciphertext the provider expands on its side, so they
  are replaced by a short marker;
* multimodal results (``{type: "content", value: [...]}`` or ``{content: [...]}``) with images or
  files are counted item by item, attachments by the attachment rules; otherwise the whole result
  is counted as pretty-printed JSON, never truncated. The JSON is ``JSON.stringify``'s to the
  character (key order, number forms), since the Observer reads the same text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from processors.tokens.attachments import ModelContext, estimate_attachment
from processors.tokens.estimate_cache import part_client_estimate
from processors.tokens.js_compat import js_json, js_string, utf16_length

_ENCRYPTED_KEY = "encryptedContent"
_ENCRYPTED_KEEP_LIMIT = 256
_IMAGE_ITEM_TYPES = frozenset({"image", "image-data"})
_FILE_ITEM_TYPES = frozenset({"audio", "file-data", "media"})


def resolve_result(provider_metadata: Mapping[str, Any] | None, result: Any) -> tuple[Any, bool]:
    """``(value to count, whether it is the stored model output)``."""
    mastra = (provider_metadata or {}).get("mastra")
    if isinstance(mastra, Mapping) and "modelOutput" in mastra:
        return mastra["modelOutput"], True
    return result, False


def serialize_result(value: Any) -> str:
    """Mastra's ``stringifyToolResult``: strings as they are; anything else as
    ``JSON.stringify(value, null, 2)`` with ciphertext stripped (also what the Observer reads)."""
    if isinstance(value, str):
        return value
    return js_json(_strip_encrypted(value))


def multimodal_items(value: Any) -> list[Any] | None:
    """The content list of a multimodal result, or ``None`` if the result is not shaped like one."""
    if not isinstance(value, Mapping):
        return None
    if value.get("type") == "content" and isinstance(value.get("value"), list):
        return value["value"]
    items = value.get("content")
    return items if isinstance(items, list) else None


def has_attachment(items: list[Any]) -> bool:
    """Whether a content list holds an image or file item (only then is it counted item by item)."""
    return any(isinstance(item, Mapping) and _as_attachment_part(item) is not None for item in items)


def count_multimodal(
    items: list[Any], context: ModelContext, count_string: Callable[[str], int]
) -> float:
    """Text items as text, attachments by the attachment rules, anything else as its JSON."""
    tokens: float = 0
    for item in items:
        if not isinstance(item, Mapping):
            continue
        attachment = _as_attachment_part(item)
        if attachment is not None:
            supplied = part_client_estimate(attachment)
            if supplied is None:
                supplied = estimate_attachment(attachment, context, count_string)
            tokens += supplied
        elif item.get("type") == "text":
            text = item.get("text")
            tokens += count_string(text if isinstance(text, str) else js_string(item.get("value")))
        else:
            tokens += count_string(serialize_result(item))
    return tokens


def _as_attachment_part(item: Mapping[str, Any]) -> dict[str, Any] | None:
    """An image/file item with inline string data, rewritten as the equivalent message part."""
    kind = item.get("type")
    if not isinstance(item.get("data"), str):
        return None
    media_type = item.get("mediaType")
    is_image = kind in _IMAGE_ITEM_TYPES or (
        kind == "media" and str(media_type or "").startswith("image/")
    )
    if not is_image and kind not in _FILE_ITEM_TYPES:
        return None
    part = {
        "type": "image" if is_image else "file",
        "image" if is_image else "data": item["data"],
        "mimeType": media_type if media_type is not None else item.get("mimeType"),
        "providerOptions": item.get("providerOptions"),
        "providerMetadata": item.get("providerMetadata"),
    }
    if not is_image:
        part["filename"] = item.get("filename")
    return part


def _strip_encrypted(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {
            key: (
                f"[stripped encryptedContent: {utf16_length(entry)} characters]"
                if _is_ciphertext(key, entry)
                else _strip_encrypted(entry)
            )
            for key, entry in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [_strip_encrypted(entry) for entry in value]
    return value


def _is_ciphertext(key: str, entry: Any) -> bool:
    return key == _ENCRYPTED_KEY and isinstance(entry, str) and utf16_length(entry) > _ENCRYPTED_KEEP_LIMIT

