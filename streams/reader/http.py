"""The reader over HTTP (aiohttp): context, status and recall for agents in any language.

Authentication: ``Authorization: Bearer <token>``; each token maps to the resource ids it may read
(``OM_READER_TOKENS``); an empty token never authenticates. A request names its resource
(``resource_id``, a string), or omits it when the token reads exactly one. A token that may not read the named resource gets 403; a thread that is not
the resource's gets 404 whether it exists elsewhere or not, after the same queries either way
(streams/reader/resolve.py). ``/openapi.json``, ``/healthz`` and ``/metrics`` are
open: the metrics (streams/metrics.py) carry no tenant data — no resource, thread or message ids
as labels, no text — so a Prometheus scraper needs no token that would also read memories; keep
the port off the public network as you would the worker's. Every request's latency is recorded
by route template (never the path, which holds a thread id). The memory view (streams/ui/) is
mounted at ``/ui/``; it checks the same tokens itself (header, or its sign-in cookie). Errors are JSON ``{"error": ...}``; no handler ever echoes data of another resource. A
ClickHouse server that cannot be reached (clickhouse-connect's transport ``OperationalError``) is a
503 with ``Retry-After`` and one WARNING line, not a traceback; the next request simply tries again.

Admission (streams/reader/admission.py): context and status share the read budget, recall has its
own, each with a per-token share, held only around the call's work (after its arguments were
checked and its body read); a call over a limit is a 429 with ``Retry-After`` at once, never
queued. Open paths are not budgeted. Recall's body must arrive within the body timeout
(streams/reader/connections.py, which also caps and times out the connections themselves).
"""

from __future__ import annotations

import functools
import hmac
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence

import orjson
from aiohttp import web
from clickhouse_connect.driver.exceptions import OperationalError
from pydantic import BaseModel
from urllib3.exceptions import HTTPError

from streams import metrics
from streams.reader.admission import Admission, Refused
from streams.reader.api import NotCaughtUp, Reader, ThreadNotFound
from streams.reader.connections import ConnectionGuard, read_body
from streams.reader.models import ErrorResponse, StatusResponse
from streams.reader.openapi import openapi_document
from streams.settings import get_settings
from streams.ui import UI_PREFIX, create_ui_app

log = logging.getLogger(__name__)

READER = web.AppKey("reader", Reader)
TOKENS = web.AppKey("tokens", dict)
ADMISSION = web.AppKey("admission", Admission)
CONNECTIONS = web.AppKey("connections", ConnectionGuard)
RESOURCES = web.RequestKey("resources", frozenset)
CALLER = web.RequestKey("caller", str)  # the bearer token, for its share of the budgets only
OPEN_PATHS = frozenset({"/openapi.json", "/healthz", "/metrics"})
MAX_WAIT_S = 30.0
RETRY_AFTER_S = 5
_TRANSPORT_PHRASES = ("executing HTTP request", "Failed to read response data from server")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def create_app(reader: Reader, tokens: Mapping[str, Sequence[str]], *, admission: Admission | None = None,
               connections: ConnectionGuard | None = None) -> web.Application:
    """The reader's aiohttp application; ``tokens`` maps bearer tokens to readable resource ids.
    ``admission`` and ``connections`` default to the process settings' limits; serve the app through
    a :class:`~streams.reader.connections.GuardedSite` of the same ``connections`` to cap and time out
    connections (streams/reader/serve.py does)."""
    connections = connections or ConnectionGuard.from_settings(get_settings())
    app = web.Application(middlewares=[connections.middleware, _timed, _errors, _auth])
    app[READER] = reader
    app[TOKENS] = {token: frozenset(resources) for token, resources in tokens.items()}
    app[ADMISSION] = admission or Admission.from_settings(get_settings())
    app[CONNECTIONS] = connections
    app.on_cleanup.append(_close_admission)
    app.router.add_get("/openapi.json", _openapi)
    app.router.add_get("/healthz", _health)
    app.router.add_get("/metrics", _metrics)
    app.router.add_get("/v1/threads/{thread_id}/context", _context)
    app.router.add_get("/v1/threads/{thread_id}/status", _status)
    app.router.add_post("/v1/recall", _recall)
    app.add_subapp(UI_PREFIX, create_ui_app(reader, functools.partial(_resources_for, app[TOKENS])))
    return app


def _json(model: BaseModel, status: int = 200) -> web.Response:
    return web.Response(body=_body(model), status=status, content_type="application/json")


def _body(model: BaseModel) -> bytes:
    return orjson.dumps(model.model_dump(mode="json", exclude_none=False))


def _error(status: int, message: str) -> web.Response:
    return _json(ErrorResponse(error=message), status)


def _retry_later(status: int, message: str, seconds: int) -> web.Response:
    response = _error(status, message)
    response.headers["Retry-After"] = str(seconds)
    return response


async def _close_admission(app: web.Application) -> None:
    app[ADMISSION].close()


@web.middleware
async def _timed(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Latency by route template (``/v1/threads/{thread_id}/context``), method and status."""
    started = time.monotonic()
    status = 500
    try:
        response = await handler(request)
        status = response.status
        return response
    except web.HTTPException as error:
        status = error.status
        raise
    finally:
        method = request.method if request.method in ("GET", "POST", "HEAD") else "other"
        metrics.READER_SECONDS.labels(_route(request), method, str(status)).observe(time.monotonic() - started)


def _route(request: web.Request) -> str:
    """The route template (``/v1/threads/{thread_id}/context``), never the path."""
    resource = request.match_info.route.resource
    return resource.canonical if resource is not None else "unmatched"


@web.middleware
async def _errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except ThreadNotFound:
        return _error(404, "thread not found")
    except NotCaughtUp as error:
        return _error(504, str(error))
    except Refused as refused:
        metrics.reader_refused(_route(request), refused.reason)
        log.debug("reader.admission.refused", extra={"route": _route(request), "reason": refused.reason})
        return _retry_later(429, _REFUSALS[refused.reason].format(refused.retry_after), refused.retry_after)
    except web.HTTPException as error:
        return _error(error.status, error.reason)
    except OperationalError as error:
        if not _unreachable(error):
            raise
        log.warning("reader.clickhouse.unavailable", extra={"path": request.path, "reason": type(error).__name__})
        return _retry_later(503, f"ClickHouse is not reachable; retry in {RETRY_AFTER_S} s", RETRY_AFTER_S)


_REFUSALS = {
    "busy": "the reader is busy with calls of this kind; retry in {} s",
    "token-busy": "this token has as many calls of this kind in flight as it may; retry in {} s",
    "token-rate": "this token made more calls of this kind than its rate allows; retry in {} s",
}


def _unreachable(error: BaseException) -> bool:
    """clickhouse-connect wraps a failed HTTP exchange (refused, reset, timed out) in an
    ``OperationalError`` whose cause is the transport's error; other ones are real query errors."""
    seen = error.__cause__ or error.__context__
    return isinstance(seen, (HTTPError, OSError)) or any(phrase in str(error) for phrase in _TRANSPORT_PHRASES)


@web.middleware
async def _auth(request: web.Request, handler: Handler) -> web.StreamResponse:
    if request.path in OPEN_PATHS or request.path.startswith(UI_PREFIX):  # the view checks the same tokens
        return await handler(request)
    scheme, _, presented = request.headers.get("Authorization", "").partition(" ")
    resources = _resources_for(request.app[TOKENS], presented) if scheme.lower() == "bearer" else None
    if resources is None:
        log.info("reader.auth.refused", extra={"path": request.path})
        return _error(401, "missing or unknown bearer token")
    request[RESOURCES] = resources
    request[CALLER] = presented
    return await handler(request)


def _resources_for(tokens: Mapping[str, frozenset[str]], presented: str) -> frozenset[str] | None:
    """The resources of the presented token; every token is compared, in constant time. An empty
    token never authenticates, whatever the configuration holds."""
    if not presented:
        return None
    found = None
    for token, resources in tokens.items():
        if hmac.compare_digest(token.encode(), presented.encode()):
            found = resources
    return found


def _resource(request: web.Request, named: object) -> str:
    allowed: frozenset[str] = request[RESOURCES]
    if named is not None and not isinstance(named, str):
        raise web.HTTPBadRequest(reason="resource_id must be a string")
    if named is None:
        if len(allowed) != 1:
            raise web.HTTPBadRequest(reason="resource_id is required: this token reads several resources")
        return next(iter(allowed))
    if named not in allowed:
        raise web.HTTPForbidden(reason="this token may not read that resource")
    return named


async def _context(request: web.Request) -> web.Response:
    thread_id = request.match_info["thread_id"]
    resource_id = _resource(request, request.query.get("resource_id"))
    wait_for = request.query.get("wait_for_message_id")
    timeout = _number(request.query.get("timeout", "5"), "timeout", 0, MAX_WAIT_S)
    chat = _flag(request.query.get("chat", "true"), "chat")
    with request.app[ADMISSION].read.admit(request[CALLER]):  # kept by the row's version: a thread read again is not assembled again
        body = await request.app[READER].context_body(thread_id, resource_id, chat=chat, wait_for_message_id=wait_for,
                                                      timeout=timeout)
    return web.Response(body=body, content_type="application/json")


async def _status(request: web.Request) -> web.Response:
    thread_id = request.match_info["thread_id"]
    resource_id = _resource(request, request.query.get("resource_id"))
    with request.app[ADMISSION].read.admit(request[CALLER]):
        status = await request.app[READER].status(thread_id, resource_id)
    return _json(StatusResponse(thread_id=thread_id, resource_id=resource_id, status=status))


async def _recall(request: web.Request) -> web.Response:
    """Delegates to :func:`streams.reader.recall.recall`, bound to the token's resource."""
    raw = await read_body(request, request.app[CONNECTIONS])
    try:
        body = orjson.loads(raw)
    except ValueError:
        raise web.HTTPBadRequest(reason="the body must be a JSON object") from None
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(reason="the body must be a JSON object")
    resource_id = _resource(request, body.pop("resource_id", None))
    admission = request.app[ADMISSION]
    await request.app[READER].tables_landed()  # what a wait returned is in the tables recall reads
    with admission.recall.admit(request[CALLER]):  # only the scan: a slow body holds no slot
        result = await admission.in_recall_thread(request.app[READER].recall, resource_id, body)
    return web.Response(body=orjson.dumps(result), content_type="application/json")


async def _openapi(request: web.Request) -> web.Response:
    return web.Response(body=orjson.dumps(openapi_document()), content_type="application/json")


async def _metrics(request: web.Request) -> web.Response:
    body, content_type = metrics.exposition()
    return web.Response(body=body, headers={"Content-Type": content_type})


async def _health(request: web.Request) -> web.Response:
    return web.Response(body=b'{"ok":true}', content_type="application/json")


def _flag(raw: str, name: str) -> bool:
    if raw not in ("true", "false"):
        raise web.HTTPBadRequest(reason=f"{name} must be true or false")
    return raw == "true"


def _number(raw: str, name: str, low: float, high: float) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise web.HTTPBadRequest(reason=f"{name} must be a number") from None
    if not low <= value <= high:
        raise web.HTTPBadRequest(reason=f"{name} must be between {low} and {high}")
    return value
