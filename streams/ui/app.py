"""The memory view's routes (an aiohttp sub-application the reader mounts at ``/ui/``).

Who sees what: the reader's bearer tokens, nothing else. A request presents its token in the
``Authorization: Bearer`` header or in the ``om_ui_token`` cookie that ``/ui/login`` sets (HttpOnly,
SameSite=Strict, path ``/ui/``: a browser cannot send a header on a link). Every page names its
resource and is refused (403) unless the token reads it; a thread resolves through the reader's own
rule (:meth:`Reader.resolve`), so a thread that is not the resource's is a 404 whether it exists
elsewhere or not. Every query behind a page is bound to that resource (streams/ui/queries.py).

Pages: ``/ui/`` (the token's resources), ``/ui/resource`` (threads and their windows),
``/ui/thread`` (the memory as the agent gets it, buffered chunks, what changed and why, the event
timeline), ``/ui/messages`` (a thread's messages, paged, by observation state or cycle) and
``/ui/marker`` (what the pages poll to refresh live).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

import orjson
from aiohttp import web

from streams.reader.api import Reader, ThreadNotFound
from streams.ui import pages
from streams.ui.render import PREFIX, error_page, login

log = logging.getLogger(__name__)

Authenticate = Callable[[str], "frozenset[str] | None"]
READER = web.AppKey("ui_reader", Reader)
AUTHENTICATE = web.AppKey("ui_authenticate", object)
COOKIE = "om_ui_token"
STATIC = Path(__file__).parent / "static"

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def create_ui_app(reader: Reader, authenticate: Authenticate) -> web.Application:
    """``authenticate(token)`` → the resources the token reads, or None (the reader's own check)."""
    app = web.Application(middlewares=[_pages_errors])
    app[READER] = reader
    app[AUTHENTICATE] = authenticate
    app.router.add_get("/", _index)
    app.router.add_get("/login", _login_form)
    app.router.add_post("/login", _login)
    app.router.add_get("/logout", _logout)
    app.router.add_get("/resource", _resource_page)
    app.router.add_get("/thread", _thread_page)
    app.router.add_get("/messages", _messages_page)
    app.router.add_get("/marker", _marker)
    app.router.add_static("/static/", STATIC)
    return app


def _html(body: str, status: int = 200) -> web.Response:
    return web.Response(text=body, status=status, content_type="text/html",
                        headers={"Cache-Control": "no-store", "X-Frame-Options": "DENY",
                                 "Content-Security-Policy": "default-src 'self'; style-src 'self' 'unsafe-inline'"})


@web.middleware
async def _pages_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except web.HTTPFound as redirect:  # returned, not raised: the reader turns raised ones into JSON errors
        return redirect
    except ThreadNotFound:
        return _html(error_page(404, "thread not found"), 404)
    except web.HTTPForbidden:
        return _html(error_page(403, "this token may not read that resource"), 403)
    except web.HTTPBadRequest as error:
        return _html(error_page(400, error.reason), 400)


def _resources(request: web.Request) -> frozenset[str]:
    """The token's resources; no token (or an unknown one) sends a page to the sign-in form."""
    scheme, _, presented = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not presented:
        presented = request.cookies.get(COOKIE, "")
    resources = request.app[AUTHENTICATE](presented)
    if resources is None:
        log.info("ui.auth.refused", extra={"path": request.path})
        if request.path == PREFIX + "marker":
            raise web.HTTPUnauthorized(reason="missing or unknown token")
        raise web.HTTPFound(PREFIX + "login")
    return resources


def _resource(request: web.Request) -> str:
    allowed = _resources(request)
    named = request.query.get("resource")
    if not named:
        raise web.HTTPBadRequest(reason="resource is required")
    if named not in allowed:
        raise web.HTTPForbidden(reason="this token may not read that resource")
    return named


def _thread(request: web.Request) -> str:
    thread = request.query.get("thread")
    if not thread:
        raise web.HTTPBadRequest(reason="thread is required")
    return thread


def _page_no(request: web.Request, name: str = "page") -> int:
    raw = request.query.get(name, "1")
    if not raw.isdigit() or int(raw) < 1:
        raise web.HTTPBadRequest(reason=f"{name} must be a positive integer")
    return int(raw)


async def _index(request: web.Request) -> web.Response:
    resources = sorted(_resources(request))
    if len(resources) == 1:
        raise web.HTTPFound(pages.resource_url(resources[0]))
    return _html(pages.index(resources))


async def _login_form(request: web.Request) -> web.Response:
    return _html(login())


async def _login(request: web.Request) -> web.Response:
    form = await request.post()
    token = str(form.get("token", ""))
    if request.app[AUTHENTICATE](token) is None:
        return _html(login("unknown token"), 401)
    response = web.HTTPFound(PREFIX)
    response.set_cookie(COOKIE, token, path=PREFIX, httponly=True, samesite="Strict",
                        secure=request.secure)
    raise response


async def _logout(request: web.Request) -> web.Response:
    response = web.HTTPFound(PREFIX + "login")
    response.del_cookie(COOKIE, path=PREFIX)
    raise response


async def _resource_page(request: web.Request) -> web.Response:
    resource = _resource(request)
    reader = request.app[READER]
    body = await asyncio.to_thread(pages.resource, reader, resource, _page_no(request))
    return _html(body)


async def _thread_page(request: web.Request) -> web.Response:
    resource, thread = _resource(request), _thread(request)
    reader = request.app[READER]
    view = await asyncio.to_thread(reader.resolve, thread, resource)
    context, status = await asyncio.gather(reader.context(thread, resource), reader.status(thread, resource))
    numbers = {name: _page_no(request, name) for name in ("changes", "events", "unobserved")}
    body = await asyncio.to_thread(pages.thread, reader, view, context, status, numbers, request.query.get("cycle", ""))
    return _html(body)


async def _messages_page(request: web.Request) -> web.Response:
    resource, thread = _resource(request), _thread(request)
    which = request.query.get("which", "all")
    if which not in ("all", "unobserved", "cycle"):
        raise web.HTTPBadRequest(reason="which must be all, unobserved or cycle")
    cycle = request.query.get("cycle", "")
    if which == "cycle" and not cycle:
        raise web.HTTPBadRequest(reason="which=cycle needs a cycle")
    reader = request.app[READER]
    view = await asyncio.to_thread(reader.resolve, thread, resource)
    body = await asyncio.to_thread(pages.messages, reader, view, which, cycle, _page_no(request))
    return _html(body)


async def _marker(request: web.Request) -> web.Response:
    resource = _resource(request)
    thread = request.query.get("thread")
    reader = request.app[READER]
    if thread:
        view = await asyncio.to_thread(reader.resolve, thread, resource)
        value = await asyncio.to_thread(pages.marker, reader, resource, [view.key], [thread])
    else:
        value = await asyncio.to_thread(pages.marker, reader, resource, [], [])
    return web.Response(body=orjson.dumps({"marker": value}), content_type="application/json",
                        headers={"Cache-Control": "no-store"})
