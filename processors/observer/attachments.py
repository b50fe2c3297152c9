"""Attachment placeholders and the ``observe_attachments`` forwarding filter (spec §5.1).

The Observer always sees a placeholder line (``[Image #1: board.png]``) so that observations can
refer to an attachment; whether the bytes themselves go to the model is the filter's call.
"""

from __future__ import annotations

import fnmatch
import mimetypes
from dataclasses import dataclass, field
from typing import Any, Literal, Union
from urllib.parse import unquote, urlparse

from schemas.messages import FilePart, ImagePart

AttachmentFilter = Union[bool, Literal["auto"], list[str]]
DEFAULT_OBSERVE_ATTACHMENTS: list[str] = ["image/*", "application/pdf"]

_IMAGE_EXTENSIONS = ("png", "jpg", "jpeg", "webp", "gif", "bmp", "tiff", "tif", "heic", "heif", "avif")
# Providers whose Observer models take images and PDFs; 'auto' forwards both to them, and
# (per the spec) forwards everything to providers it does not know.
_AUTO_CAPABILITIES: dict[str, list[str]] = {
    "google": ["image/*", "application/pdf"],
    "gemini": ["image/*", "application/pdf"],
    "vertex": ["image/*", "application/pdf"],
    "anthropic": ["image/*", "application/pdf"],
    "openai": ["image/*", "application/pdf"],
    "om-deterministic": [],
}


@dataclass
class AttachmentCounter:
    """Image and file numbers start at 1 per Observer call and are shared across threads."""

    images: int = 0
    files: int = 0
    forwarded: list[dict[str, Any]] = field(default_factory=list)

    def next_number(self, is_image: bool) -> int:
        if is_image:
            self.images += 1
            return self.images
        self.files += 1
        return self.files


def is_image_like(part: ImagePart | FilePart) -> bool:
    if isinstance(part, ImagePart):
        return True
    if part.mime_type.lower().startswith("image/") or part.data.startswith("data:image/"):
        return True
    for name in (part.filename or "", _url_path(part.data)):
        if name.lower().rsplit(".", 1)[-1] in _IMAGE_EXTENSIONS and "." in name:
            return True
    return False


def attachment_label(part: ImagePart | FilePart, typed: bool = True) -> str | None:
    """The trimmed filename, else the decoded last segment of a URL's path, else the mime type.

    ``typed=False`` marks a part whose source gave no mime type (a tool-result block without
    ``mediaType``): it then has no label rather than the schema's default type.
    """
    if part.filename and part.filename.strip():
        return part.filename.strip()
    source = part.image if isinstance(part, ImagePart) else part.data
    segments = [segment for segment in _url_path(source).split("/") if segment]
    if segments:
        return unquote(segments[-1])
    return part.mime_type if typed else None


def placeholder(part: ImagePart | FilePart, counter: AttachmentCounter, typed: bool = True) -> tuple[str, bool]:
    """``([Image #n: label]`` or ``[File #n: label]``, is_image)``."""
    image = is_image_like(part)
    number = counter.next_number(image)
    kind = "Image" if image else "File"
    label = attachment_label(part, typed)
    return (f"[{kind} #{number}: {label}]" if label else f"[{kind} #{number}]"), image


def matching_mime(part: ImagePart | FilePart, image: bool, typed: bool | None = None) -> str:
    """The mime the filter matches: the part's own when it gave one (lower-cased), else ``image/*``
    for images and image-like files, else ``application/octet-stream`` (Mastra's rule).

    ``typed`` says whether the source gave a mime (tool-result blocks know). A message's file part
    cannot tell (the schema defaults to ``application/octet-stream``), so ``None`` keeps the
    reading that an image-like file uploaded without an image mime matches as an image.
    """
    mime = (part.mime_type or "").lower()
    if typed is None:
        if image:
            return mime if mime.startswith("image/") else "image/*"
        return mime or "application/octet-stream"
    if typed and mime:
        return mime
    return "image/*" if image else "application/octet-stream"


def should_forward(mime: str, setting: AttachmentFilter, model: str) -> bool:
    if setting is True:
        return True
    if setting is False:
        return False
    if setting == "auto":
        patterns = _auto_patterns(model)
        return True if patterns is None else _matches_any(mime, patterns)
    return _matches_any(mime, list(setting))


def content_part(part: ImagePart | FilePart, image: bool) -> dict[str, Any]:
    """The attachment as an OpenAI-style content part (what litellm forwards to providers)."""
    source = part.image if isinstance(part, ImagePart) else part.data
    mime = matching_mime(part, image)
    if mime == "image/*":
        mime = mimetypes.guess_type(part.filename or _url_path(source) or "x.png")[0] or "image/png"
    is_url = source.startswith(("http://", "https://", "gs://", "data:"))
    url = source if is_url else f"data:{mime};base64,{source}"
    if image:
        return {"type": "image_url", "image_url": {"url": url}}
    if url.startswith("data:"):
        return {"type": "file", "file": {"file_data": url, "filename": part.filename or ""}}
    return {"type": "file", "file": {"file_id": url, "format": mime}}


def _matches_any(mime: str, patterns: list[str]) -> bool:
    mime = mime.lower()
    for pattern in patterns:
        pattern = pattern.lower()
        if pattern in ("*", "*/*") or pattern == mime or fnmatch.fnmatchcase(mime, pattern):
            return True
    return False


def _auto_patterns(model: str) -> list[str] | None:
    provider = model.split("/", 1)[0].lower() if "/" in model else ""
    for name, patterns in _AUTO_CAPABILITIES.items():
        if name in provider:
            return patterns
    return None


def _url_path(source: str) -> str:
    if not source.startswith(("http://", "https://", "gs://", "file://")):
        return ""
    return urlparse(source).path
