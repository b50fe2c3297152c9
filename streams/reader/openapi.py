"""The OpenAPI 3.1 document of the reader, generated from the pydantic models it serves.

Generated, not written: the models are the contract, so the document cannot drift from them.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pydantic.json_schema import models_json_schema

from streams.reader.models import ContextResponse, ErrorResponse, RecallRequest, RecallResponse, StatusResponse

_REF = "#/components/schemas/{model}"
_MODELS = (ContextResponse, StatusResponse, RecallRequest, RecallResponse, ErrorResponse)


def _ref(model: type) -> dict[str, str]:
    return {"$ref": _REF.format(model=model.__name__)}


def _json_body(model: type, description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": _ref(model)}}}


def _errors(*codes: int) -> dict[str, Any]:
    reasons = {400: "invalid request", 401: "missing or unknown token", 403: "resource not readable with this token",
               404: "thread not found for this resource", 503: "ClickHouse not reachable; retry after Retry-After seconds",
               504: "the awaited message was not materialised in time"}
    return {str(code): _json_body(ErrorResponse, reasons[code]) for code in codes}


def _param(name: str, where: str, description: str, schema: dict[str, Any], required: bool = False) -> dict[str, Any]:
    return {"name": name, "in": where, "required": required, "description": description, "schema": schema}


_THREAD = _param("thread_id", "path", "the thread", {"type": "string"}, required=True)
_RESOURCE = _param("resource_id", "query", "the resource; optional when the token reads exactly one",
                   {"type": "string"})


@lru_cache(maxsize=1)
def openapi_document() -> dict[str, Any]:
    _, schemas = models_json_schema([(m, "serialization") for m in _MODELS], ref_template=_REF)
    return {
        "openapi": "3.1.0",
        "info": {"title": "Observational Memory reader", "version": "1"},
        "components": {
            "schemas": schemas.get("$defs", {}),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
        "paths": {
            "/v1/threads/{thread_id}/context": {"get": {
                "summary": "The message list the agent should send next (spec §7)",
                "parameters": [
                    _THREAD, _RESOURCE,
                    _param("wait_for_message_id", "query", "wait until this message is materialised",
                           {"type": "string"}),
                    _param("timeout", "query", "seconds to wait, at most 30", {"type": "number", "default": 5}),
                    _param("chat", "query", "false: `chat` comes empty (about half the bytes of a long window) "
                           "and each message is written as stored (fields left at their defaults omitted); "
                           "it is the system texts as system turns, then the continuation and messages each "
                           "as {role, content}: its text parts joined by newlines, a signal as the user's",
                           {"type": "boolean", "default": True}),
                ],
                "responses": {"200": _json_body(ContextResponse, "the context"), **_errors(400, 401, 403, 404, 503, 504)},
            }},
            "/v1/threads/{thread_id}/status": {"get": {
                "summary": "The newest data-om-status windows of the thread's record",
                "parameters": [_THREAD, _RESOURCE],
                "responses": {"200": _json_body(StatusResponse, "the status"), **_errors(400, 401, 403, 404, 503)},
            }},
            "/v1/recall": {"post": {
                "summary": "The recall tool (spec §8), bound to the token's resource",
                "requestBody": {"required": True, "content": {"application/json": {"schema": _ref(RecallRequest)}}},
                "responses": {"200": _json_body(RecallResponse, "the recall result"), **_errors(400, 401, 403, 503)},
            }},
        },
    }
