"""Attachments inside a tool result of AI-SDK ``type: 'content'`` (spec §5.1), as Mastra 1.31 finds them.

The rules are those of ``extractToolResultAttachments`` / ``mapToolResultBlockToAttachment``
(``observer-agent.ts``); the rendered text is a format fact, so they are kept to the letter:

* Only a result ``{"type": "content", "value": [...]}`` is looked into; any other result is
  shown as it is.
* A block is an attachment when it is ``image-data`` with string ``data`` (an image; a
  ``data:<mediaType>;base64,`` URI when it has a ``mediaType``), ``image-url`` with a string
  ``url`` (an image), ``media`` with string ``data`` *and* a ``mediaType`` (an image when that is
  ``image/*``, else a file; always a data URI), ``file-data`` with string ``data`` (a file, data
  URI when typed, with its ``filename``) or ``file-url`` with a string ``url`` (a file, with its
  ``filename``). The media type is the block's ``mediaType`` only; only file blocks carry a name.
* Each attachment block is replaced by ``{"type": <its type>, "placeholder": "[Image #1: …]"}``;
  every other block, and every other key of the result, stays as it was and where it was. The
  whole result is then shown as JSON (``tool_format.py``), so the Observer reads the text items
  in place and each attachment by its placeholder, whose bytes may follow as forwarded parts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from schemas.messages import FilePart, ImagePart


@dataclass(frozen=True)
class ResultAttachment:
    """An attachment found in a result; ``typed`` says whether the block gave a media type."""

    part: ImagePart | FilePart
    typed: bool


def with_placeholders(result: Any, placeholder_for: Callable[[ResultAttachment], str]) -> Any:
    """The result with each attachment block replaced by its placeholder (numbered in order)."""
    if not (isinstance(result, dict) and result.get("type") == "content" and isinstance(result.get("value"), list)):
        return result
    found = False
    value: list[Any] = []
    for block in result["value"]:
        attachment = result_attachment(block)
        if attachment is None:
            value.append(block)
            continue
        found = True
        value.append({"type": block["type"], "placeholder": placeholder_for(attachment)})
    return {**result, "value": value} if found else result


def result_attachment(block: Any) -> ResultAttachment | None:
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        return None
    kind = block["type"]
    media_type = block.get("mediaType") if isinstance(block.get("mediaType"), str) else None
    filename = block.get("filename") if isinstance(block.get("filename"), str) else None
    data, url = block.get("data"), block.get("url")
    if kind == "image-data" and isinstance(data, str):
        return _image(_data_uri(data, media_type), media_type)
    if kind == "image-url" and isinstance(url, str):
        return _image(url, media_type)
    if kind == "media" and isinstance(data, str) and media_type:
        if media_type.lower().startswith("image/"):
            return _image(_data_uri(data, media_type), media_type)
        return _file(_data_uri(data, media_type), media_type, None)
    if kind == "file-data" and isinstance(data, str):
        return _file(_data_uri(data, media_type), media_type, filename)
    if kind == "file-url" and isinstance(url, str):
        return _file(url, media_type, filename)
    return None


def _data_uri(data: str, media_type: str | None) -> str:
    return f"data:{media_type};base64,{data}" if media_type else data


def _image(source: str, media_type: str | None) -> ResultAttachment:
    return ResultAttachment(ImagePart(image=source, mime_type=media_type), typed=media_type is not None)


def _file(source: str, media_type: str | None, filename: str | None) -> ResultAttachment:
    part = FilePart(data=source, filename=filename, **({"mime_type": media_type} if media_type else {}))
    return ResultAttachment(part, typed=media_type is not None)
