"""Mastra's stored messages (``mastra_messages`` rows) to our :class:`ChatMessage`.

Mastra stores ``content`` as JSON text in its format 2 (``MastraMessageContentV2``):
``{"format": 2, "parts": [...], "content"?: str, "metadata"?: {...}, "experimental_attachments"?: [...]}``
whose parts are AI SDK v4 UI parts. Most map one to one; the differences are:

* ``tool-invocation`` nests its fields under ``toolInvocation`` (flattened here);
* ``reasoning`` carries ``reasoning`` (or ``details[].text``) instead of ``text``;
* ``file`` says ``mimeType``/``data`` (``mediaType``/``url`` in newer rows — both read);
* parts our schema does not model (``source``, ``source-url`` …) become ``data-mastra-<type>``
  parts: kept, stored and shown by recall as bookkeeping, but never sent to a model — as Mastra
  itself never sends them to the Observer.

Older rows hold a plain string or a v1 ``CoreMessage`` content array; both are read too.
Timestamps are ISO-8601 text in LibSQL/SQLite and ``timestamp`` values in PostgreSQL; both become
UTC epoch ms (a naive timestamp is UTC, as Mastra writes it). Where Mastra's PostgreSQL store has the
timezone-aware mirror column (``createdAtZ``, 1.x) it is read first, as Mastra reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from schemas.base import SchemaError
from schemas.messages import ChatMessage
from streams.replay.source import ReplayInputError

# Threads' current owner wins over the message's own resourceId: Mastra can move a thread to
# another resource, and our records refuse a thread that changes resource mid-stream.
MESSAGES_SQL_TEMPLATE = """
SELECT m.id, m.thread_id, m.content, m.role, {created}, {resource}
FROM mastra_messages AS m LEFT JOIN mastra_threads AS t ON t.id = m.thread_id
ORDER BY COALESCE({resource}, m.thread_id), {created}, m.id
"""
# the columns every Mastra store's messages table has; "resourceId" (a message's own owner) came later
# and is optional: without it the thread's owner is the message's, as Mastra reads it
MESSAGE_COLUMNS = ("id", "thread_id", "content", "role", "createdAt")


def messages_sql(columns: list[str], where: str) -> str:
    """The messages query for a store whose ``mastra_messages`` has ``columns``; refuses, naming the
    column, a table that lacks one every Mastra store has."""
    missing = [c for c in MESSAGE_COLUMNS if c not in columns]
    if missing:
        raise ReplayInputError(f"{where}: mastra_messages has no column {missing[0]!r} (columns: {sorted(columns)}); "
                               "this is not a Mastra storage database this importer reads — open it with its Mastra "
                               "version once so Mastra migrates it, then replay")
    # Mastra's PostgreSQL store keeps a timezone-aware mirror of each timestamp ("createdAtZ" …) and reads it first
    created = 'COALESCE(m."createdAtZ", m."createdAt")' if "createdAtZ" in columns else 'm."createdAt"'
    resource = 'COALESCE(t."resourceId", m."resourceId")' if "resourceId" in columns else 't."resourceId"'
    return MESSAGES_SQL_TEMPLATE.format(created=created, resource=resource)

COUNT_SQL = "SELECT count(*), count(DISTINCT thread_id), max(\"createdAt\") FROM mastra_messages"


@dataclass(frozen=True)
class MastraRow:
    id: str
    thread_id: str
    content: Any
    role: str
    created_at: Any
    resource_id: str | None


def message_from_row(row: MastraRow) -> ChatMessage:
    """One stored Mastra message as a ChatMessage; :class:`SchemaError` names what is wrong."""
    content = _json(row.content)
    metadata = content.get("metadata") if isinstance(content, dict) else None
    return ChatMessage.from_obj({
        "id": row.id, "thread_id": row.thread_id, "resource_id": row.resource_id or None,
        "role": row.role, "created_at": epoch_ms(row.created_at), "parts": parts_from_content(content),
        "metadata": metadata if isinstance(metadata, dict) and metadata else None,
    })


def epoch_ms(value: Any) -> int:
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError as error:
            raise SchemaError("createdAt", f"not an ISO-8601 timestamp: {value!r}") from error
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        return int(moment.timestamp() * 1000)
    raise SchemaError("createdAt", f"not a timestamp: {value!r}")


def parts_from_content(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if isinstance(content, list):
        return [p for item in content for p in _v1_part(item)]
    if not isinstance(content, dict):
        raise SchemaError("content", f"expected Mastra format 2 JSON, got {type(content).__name__}")
    parts = [_v2_part(part) for part in content.get("parts") or [] if isinstance(part, dict)]
    if not parts and isinstance(content.get("content"), str) and content["content"]:
        parts.append({"type": "text", "text": content["content"]})
    parts.extend(_attachment(a) for a in content.get("experimental_attachments") or [] if isinstance(a, dict))
    return parts


def _json(raw: Any) -> Any:
    if not isinstance(raw, (str, bytes)):
        return raw  # PostgreSQL jsonb arrives decoded
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw if isinstance(raw, str) else raw.decode()  # Mastra reads non-JSON content as text


def _v2_part(part: dict[str, Any]) -> dict[str, Any]:
    kind = part.get("type")
    if kind == "tool-invocation" and isinstance(part.get("toolInvocation"), dict):
        call = part["toolInvocation"]
        return _keep(part, type="tool-invocation", tool_call_id=call.get("toolCallId"),
                     tool_name=call.get("toolName"), state=call.get("state", "call"),
                     args=call.get("args"), result=call.get("result"))
    if kind == "reasoning":
        details = "".join(d.get("text", "") for d in part.get("details") or [] if isinstance(d, dict))
        return _keep(part, type="reasoning", text=part.get("reasoning") or part.get("text") or details)
    if kind == "file":
        return _keep(part, type="file", data=part.get("data") or part.get("url") or "",
                     mime_type=part.get("mimeType") or part.get("mediaType") or "application/octet-stream")
    if kind in ("text", "image", "step-start") or (isinstance(kind, str) and kind.startswith("data-")):
        return part
    return {"type": f"data-mastra-{kind}", "data": part}


def _keep(part: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """The converted fields plus the provider metadata Mastra keeps per part (token estimates)."""
    meta = part.get("providerMetadata")
    return {**fields, "provider_metadata": meta} if meta else fields


def _attachment(attachment: dict[str, Any]) -> dict[str, Any]:
    mime = attachment.get("contentType") or "application/octet-stream"
    url = attachment.get("url", "")
    if mime.startswith("image/"):
        return {"type": "image", "image": url, "mime_type": mime, "filename": attachment.get("name")}
    return {"type": "file", "data": url, "mime_type": mime, "filename": attachment.get("name")}


def _v1_part(item: Any) -> list[dict[str, Any]]:
    """A v1 (``CoreMessage``) content item: text, tool-call and tool-result become our parts."""
    if not isinstance(item, dict):
        return []
    kind = item.get("type")
    if kind == "text":
        return [{"type": "text", "text": item.get("text", "")}]
    if kind in ("tool-call", "tool-result"):
        state = "call" if kind == "tool-call" else "result"
        return [{"type": "tool-invocation", "tool_call_id": item.get("toolCallId"), "tool_name": item.get("toolName"),
                 "state": state, "args": item.get("args"), "result": item.get("result")}]
    return [{"type": f"data-mastra-{kind}", "data": item}]
