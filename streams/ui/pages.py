"""The memory view's pages: gather a page's rows (streams/ui/queries.py), lay them out (render.py).

Synchronous (the handlers run them in a thread, as the reader runs its queries). Every function
takes a resource the caller has already checked against the token, and a thread only as a
:class:`ThreadView` the reader resolved for that resource.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from processors.context import AgentContext
from schemas.lifecycle import StatusEvent
from streams.ledger import by_day, usd
from streams.reader.api import Reader
from streams.reader.queries import WindowRequest, working_memories
from streams.reader.resolve import ThreadView
from streams.ui import queries
from streams.ui.audit import changes_section, model_name
from streams.ui.render import (
    esc,
    event_summary,
    log_lines,
    message_text,
    page,
    pager,
    section,
    system_message,
    table,
    tokens,
    url,
    when,
    windows,
)

THREADS_PER_PAGE = 50
MESSAGES_PER_PAGE = 50
UNOBSERVED_PER_PAGE = 20
EVENTS_PER_PAGE = 40
TIMELINE_TYPES = ("observation-start", "observation-end", "observation-failed", "buffering-start",
                  "buffering-end", "buffering-failed", "activation", "thread-update", "observation-latched",
                  "budget-exceeded", "budget-restored")
ANSWERED = frozenset({"observation-end", "observation-failed", "buffering-end", "buffering-failed"})
"""The events that end a cycle's model calls: where the ledger's tokens and cost are shown."""


def resource_url(resource: str, page_no: int = 1) -> str:
    return url("resource", resource=resource, page=page_no if page_no > 1 else None)


def thread_url(resource: str, thread: str, **extra: object) -> str:
    return url("thread", resource=resource, thread=thread, **extra)


def index(resources: Sequence[str]) -> str:
    rows = [[f'<a href="{esc(resource_url(r))}">{esc(r)}</a>'] for r in resources]
    body = section("Resources this token reads", table(["resource"], rows) if rows else
                   '<p class="muted">this token reads no resource</p>')
    return page("resources", body, crumbs=[("resources", "")])


def resource(reader: Reader, resource_id: str, page_no: int) -> str:
    client, config = reader.client, reader.config
    total, rows = queries.threads(client, resource_id, THREADS_PER_PAGE, (page_no - 1) * THREADS_PER_PAGE)
    heads, statuses = queries.heads(client, resource_id), queries.statuses(client, resource_id)
    resolved = config.resolved
    shared = config.scope == "resource"
    body = []
    if shared:
        key = f"resource:{resource_id}"
        head = heads.get(key)
        body.append(section("Memory of the whole resource", _generation(head) +
                            windows(statuses.get(key), resolved.block_after, resolved.reflection_block_after),
                            note="resource scope: one record serves every thread"))
    cells = []
    for row in rows:
        key = f"resource:{resource_id}" if shared else f"thread:{row.thread_id}"
        head = heads.get(key)
        meta = head.threads.get(row.thread_id) if head is not None else None
        title = meta.thread_title if meta is not None and meta.thread_title else ""
        link = f'<a href="{esc(thread_url(resource_id, row.thread_id))}">{esc(row.thread_id)}</a>'
        shown = "" if shared else windows(statuses.get(key), resolved.block_after, resolved.reflection_block_after)
        cells.append([link + (f'<div class="title">{esc(title)}</div>' if title else ""),
                      f"{row.messages:,}", when(row.last_message_at),
                      str(head.generation) if head is not None else "—", shown])
    headers = ["thread", "messages", "last message", "generation", "" if shared else "windows"]
    listing = table(headers, cells, cls="threads") if cells else '<p class="muted">no threads yet</p>'
    body.append(section("Threads", listing + pager(total, page_no, THREADS_PER_PAGE, resource_url(resource_id)),
                        note=f"{total:,} thread(s), most recent first"))
    body.append(section("Cost by day", _costs(reader, resource_id), anchor="costs",
                        note="model calls of this resource, litellm's offline prices; — = model not priced"))
    return page(resource_id, "".join(body), crumbs=[("resources", url("")), (resource_id, "")],
                marker_url=url("marker", resource=resource_id), marker=marker(reader, resource_id, [], []))


def _costs(reader: Reader, resource_id: str) -> str:
    lines = by_day(reader.client, resource=resource_id, limit=60)
    if not lines:
        return '<p class="muted">no model calls yet</p>'
    cells = [[esc(line.day), esc(line.role), f"<code>{esc(line.model or '?')}</code>", f"{line.calls:,}",
              tokens(line.input_tokens), tokens(line.cached_input_tokens), tokens(line.cache_write_input_tokens),
              tokens(line.output_tokens),
              usd(line.cost_usd) + (f" (+{line.unpriced} unpriced)" if line.unpriced and line.cost_usd is not None
                                    else "")] for line in lines]
    return table(["day (UTC)", "role", "model", "calls", "input tokens", "of them cached", "cache writes",
                  "output tokens", "cost"],
                 cells, cls="costs")


def _generation(head: queries.KeyHead | None) -> str:
    if head is None:
        return '<p class="muted">no record yet</p>'
    return (f'<p class="facts">generation <b>{head.generation}</b> · '
            f"{tokens(head.observation_tokens)} observation tokens</p>")


def thread(reader: Reader, view: ThreadView, context: AgentContext, status: StatusEvent | None,
           numbers: Mapping[str, int], cycle: str) -> str:
    client, config = reader.client, reader.config
    resource_id, thread_id, key = view.resource_id, view.thread_id, view.key
    head = view.head
    version = head.version if head is not None else 0
    here = thread_url(resource_id, thread_id, cycle=cycle or None)
    resolved = config.resolved
    meta = head.threads.get(thread_id) if head is not None else None
    facts = [f"lookup key <code>{esc(key)}</code>", f"generation <b>{head.generation if head else '—'}</b>",
             f"observed through {when(head.last_observed_at if head else None)}",
             f"observer model <code>{esc(model_name(config, 'observer'))}</code>",
             f"reflector model <code>{esc(model_name(config, 'reflector'))}</code>",
             f'<span class="spend">{_spend(reader, view)}</span>']
    title = meta.thread_title if meta is not None and meta.thread_title else ""
    overview = (f'<p class="facts">{" · ".join(facts)}</p>'
                + (f'<p class="title">{esc(title)}</p>' if title else "")
                + windows(status, resolved.block_after, resolved.reflection_block_after))
    parts = [section("Windows", overview, anchor="windows"),
             section("Memory as the agent gets it", _memory(reader, view, context, meta), anchor="memory",
                     note="the system messages of the context, in order"),
             section("Unobserved messages", _unobserved(client, view, version, numbers["unobserved"], here),
                     anchor="unobserved", note="sent to the model verbatim after the memory"),
             section("Buffered chunks waiting for activation", _chunks(client, key, head.generation if head else 0),
                     anchor="chunks"),
             section("What changed and why", changes_section(reader, view, numbers["changes"], here, cycle), anchor="changes",
                     note=f"only cycle {cycle}" if cycle else "newest first"),
             section("Timeline", _timeline(reader, view, numbers["events"], here), anchor="timeline",
                     note="lifecycle events, newest first" + (" (the whole resource's record)" if config.scope ==
                                                               "resource" else ""))]
    return page(thread_id, "".join(parts),
                crumbs=[("resources", url("")), (resource_id, resource_url(resource_id)), (thread_id, "")],
                marker_url=url("marker", resource=resource_id, thread=thread_id),
                marker=marker(reader, resource_id, [key], [thread_id]))


def _memory(reader: Reader, view: ThreadView, context: AgentContext, meta: object) -> str:
    shown = [system_message(text, n) for n, text in enumerate(context.system)]
    if reader.config.observation.manage_working_memory and view.head is not None:
        window = WindowRequest(view.resource_id, view.thread_id, view.key, view.head.version)
        if working_memories(reader.client, [window])[0] is None:
            shown.append('<p class="muted">working memory: none yet</p>')
    hints = []
    for label, value in (("current task", getattr(meta, "current_task", None)),
                         ("suggested response", getattr(meta, "suggested_response", None))):
        if value:
            hints.append(f'<div class="hint"><span class="tag">{label}</span> {esc(value)}</div>')
    if context.continuation is not None:
        text = " ".join(getattr(p, "text", "") for p in context.continuation.parts)
        hints.append(f'<details class="hint" id="continuation"><summary><span class="tag">continuation reminder'
                     f"</span> sent as a user message after the memory</summary><pre>{esc(text)}</pre></details>")
    if not context.system:
        return '<p class="muted">no memory yet</p>'
    return "".join(shown) + (f'<div class="hints"><h3>Continuation hints</h3>{"".join(hints)}</div>' if hints else "")


def _unobserved(client, view: ThreadView, version: int, page_no: int, here: str) -> str:
    total, rows = queries.messages(client, view.resource_id, view.thread_id, view.key, version, which="unobserved",
                                   limit=UNOBSERVED_PER_PAGE, offset=(page_no - 1) * UNOBSERVED_PER_PAGE)
    if not rows:
        return '<p class="muted">none: every message is in the memory</p>'
    all_link = url("messages", resource=view.resource_id, thread=view.thread_id)
    return (_message_table(view, rows) + pager(total, page_no, UNOBSERVED_PER_PAGE, here, "unobserved")
            + f'<p><a href="{esc(all_link)}">all messages of this thread</a></p>')


def _message_table(view: ThreadView, rows: Sequence[queries.MessageRow]) -> str:
    cells = []
    for row in rows:
        seen = (f'<a href="{esc(thread_url(view.resource_id, view.thread_id, cycle=row.cycle_id))}#changes">'
                f"{esc(row.cycle_id)}</a>" if row.cycle_id else '<span class="badge">unobserved</span>')
        cells.append([f'<span id="m-{esc(row.id)}">{esc(row.id)}</span>', when(row.created_at), esc(row.role),
                      message_text(row.text), seen])
    return table(["id", "created", "role", "text", "observed by"], cells, cls="messages")


def _chunks(client, key: str, generation: int) -> str:
    rows = queries.buffered_chunks(client, key, generation)
    if not rows:
        return '<p class="muted">none</p>'
    cells = [[esc(c.chunk_id), when(c.created_at), f"{len(c.message_ids)} ({tokens(c.message_tokens)} tokens)",
              tokens(c.token_count), f'<div class="chunk">{log_lines(c.observations)}</div>'] for c in rows]
    return table(["chunk", "buffered", "messages", "observation tokens", "observations"], cells, cls="chunks")


def _timeline(reader: Reader, view: ThreadView, page_no: int, here: str) -> str:
    total, rows = queries.events(reader.client, view.resource_id, view.key, TIMELINE_TYPES, EVENTS_PER_PAGE,
                                 (page_no - 1) * EVENTS_PER_PAGE)
    if not rows:
        return '<p class="muted">no lifecycle events yet</p>'
    calls = queries.model_calls(reader.client, view.resource_id, view.key,
                                sorted({getattr(r.event, "cycle_id", "") for r in rows if r.event.type in ANSWERED}))
    cells = []
    for row in rows:
        event = row.event
        operation = getattr(event, "operation_type", "")
        cycle = getattr(event, "cycle_id", "")
        call = calls.get(cycle) if event.type in ANSWERED else None
        role = "reflector" if operation == "reflection" else "observer"
        model = (call.model if call is not None and call.model else model_name(reader.config, role)) if operation else ""
        failed = " failed" if event.type.endswith("-failed") else ""
        link = f'<a href="{esc(thread_url(view.resource_id, view.thread_id, cycle=cycle))}#changes">{esc(cycle)}</a>'
        cells.append([when(event.at), f'<span class="etype{failed}">{esc(event.type)}</span>', esc(operation),
                      event_summary(event), f"<code>{esc(model)}</code>" if model else "", _call(call), link])
    return (table(["at", "event", "operation", "figures", "model", "model call", "cycle"], cells, cls="timeline")
            + pager(total, page_no, EVENTS_PER_PAGE, here, "events"))


def _call(call: queries.ModelCall | None) -> str:
    """A cycle's billed tokens and cost, from the ledger, on the event that ends the cycle."""
    if call is None:
        return ""
    tries = f" · {call.attempts} attempts" if call.attempts > 1 else ""
    return (f'<span class="call">{tokens(call.input_tokens)} in{_cached(call.cached_input_tokens)} · '
            f"{tokens(call.output_tokens)} out · {usd(call.cost_usd)}{tries}</span>")


def _cached(cached_tokens: int) -> str:
    return f" ({tokens(cached_tokens)} cached)" if cached_tokens else ""


def _spend(reader: Reader, view: ThreadView) -> str:
    calls, i, cached, o, cost, unpriced = queries.call_totals(reader.client, view.resource_id, view.key)
    if not calls:
        return "no model calls yet"
    extra = f" (+{unpriced} unpriced)" if unpriced and cost is not None else ""
    return f"{calls:,} model call(s) · {tokens(i)} in{_cached(cached)} · {tokens(o)} out · {usd(cost)}{extra}"


def messages(reader: Reader, view: ThreadView, which: queries.MessageFilter, cycle: str, page_no: int) -> str:
    version = view.head.version if view.head is not None else 0
    total, rows = queries.messages(reader.client, view.resource_id, view.thread_id, view.key, version,
                                   which=which, cycle=cycle, limit=MESSAGES_PER_PAGE,
                                   offset=(page_no - 1) * MESSAGES_PER_PAGE)
    here = url("messages", resource=view.resource_id, thread=view.thread_id,
               which=which if which != "all" else None, cycle=cycle or None)
    filters = " · ".join(f'<a href="{esc(url("messages", resource=view.resource_id, thread=view.thread_id, which=w))}"'
                         f">{w}</a>" for w in ("all", "unobserved"))
    title = f"Messages observed by cycle {cycle}" if which == "cycle" else f"Messages ({which})"
    body = (f'<p class="filters">show: {filters}</p>'
            + (_message_table(view, rows) if rows else '<p class="muted">no messages</p>')
            + pager(total, page_no, MESSAGES_PER_PAGE, here))
    return page(f"messages · {view.thread_id}", section(title, body, note=f"{total:,}, newest first"),
                crumbs=[("resources", url("")), (view.resource_id, resource_url(view.resource_id)),
                        (view.thread_id, thread_url(view.resource_id, view.thread_id)), ("messages", "")],
                marker_url=url("marker", resource=view.resource_id, thread=view.thread_id),
                marker=marker(reader, view.resource_id, [view.key], [view.thread_id]))


def marker(reader: Reader, resource_id: str, keys: Sequence[str], threads: Sequence[str]) -> str:
    return queries.marker(reader.client, resource_id, keys, threads)

