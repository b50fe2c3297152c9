"""HTML for the memory view: small functions that return escaped strings, no template engine.

Rules: every piece of stored text (observations, messages, titles, ids, errors) goes through
:func:`esc` before it reaches the page; links carry ids only as URL-encoded query values. The page
works without JavaScript; ``ui.js`` only adds the live refresh.
"""

from __future__ import annotations

import html
import urllib.parse
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from schemas.lifecycle import LifecycleEvent, StatusEvent

PREFIX = "/ui/"


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def url(route: str, /, **query: object) -> str:
    shown = {k: v for k, v in query.items() if v not in (None, "", 0)}
    return PREFIX + route + ("?" + urllib.parse.urlencode(shown) if shown else "")


def when(ms: int | None) -> str:
    if not ms:
        return "—"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def tokens(n: int | None) -> str:
    return "—" if n is None else f"{n:,}"


def page(title: str, body: str, *, crumbs: Sequence[tuple[str, str]] = (), marker_url: str = "",
         marker: str = "") -> str:
    trail = " › ".join(f'<a href="{esc(href)}">{esc(name)}</a>' if href else esc(name) for name, href in crumbs)
    live = (f'<span id="live" data-url="{esc(marker_url)}" data-marker="{esc(marker)}">live</span>'
            if marker_url else "")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{esc(title)} · om memory view</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="{PREFIX}static/ui.css"></head>
<body><header><a class="brand" href="{PREFIX}">om · memory view</a><nav>{trail}</nav>{live}
<a class="signout" href="{PREFIX}logout">sign out</a></header>
<main id="view">{body}</main>
<script src="{PREFIX}static/ui.js" defer></script></body></html>"""


def login(error: str = "") -> str:
    problem = f'<p class="error">{esc(error)}</p>' if error else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>sign in · om memory view</title>
<link rel="stylesheet" href="{PREFIX}static/ui.css"></head>
<body><main class="login"><h1>om · memory view</h1>{problem}
<form method="post" action="{PREFIX}login"><label>Reader token
<input type="password" name="token" autocomplete="off" autofocus></label>
<button type="submit">Sign in</button></form>
<p class="hint">The same bearer tokens as the reader's API (<code>OM_READER_TOKENS</code>): a token shows only its
resources.</p></main></body></html>"""


def error_page(status: int, message: str) -> str:
    return page(f"{status}", f'<section><h1>{status}</h1><p class="error">{esc(message)}</p></section>')


def section(title: str, body: str, *, anchor: str = "", note: str = "") -> str:
    extra = f' <span class="note">{esc(note)}</span>' if note else ""
    return f'<section id="{esc(anchor)}"><h2>{esc(title)}{extra}</h2>{body}</section>'


def bar(label: str, value: int, threshold: int, *, buffered: int = 0, block_after: int | None = None,
        buffered_label: str = "buffered") -> str:
    """A window against its threshold: the filled part, the buffered part of it (hatched), the
    threshold line and the block-after line; the scale leaves room for whichever is largest."""
    scale = max(value, threshold, block_after or 0, 1) * 1.08

    def pct(n: int) -> str:
        return f"{min(100.0, 100.0 * n / scale):.2f}%"

    buffered = min(buffered, value)
    block = (f'<div class="line block" style="left:{pct(block_after)}" title="block after {tokens(block_after)}">'
             f"</div>" if block_after else "")
    over = " over" if value >= threshold else ""
    legend = f"{tokens(value)} / {tokens(threshold)} tokens"
    if buffered:
        legend += f" · {tokens(buffered)} {buffered_label}"
    if block_after:
        legend += f" · blocks at {tokens(block_after)}"
    return f"""<div class="window" data-window="{esc(label)}" data-tokens="{value}" data-threshold="{threshold}">
<div class="label">{esc(label)}</div><div class="track">
<div class="fill{over}" style="width:{pct(value)}"></div>
<div class="buffered" style="width:{pct(buffered)}"></div>
<div class="line threshold" style="left:{pct(threshold)}" title="threshold {tokens(threshold)}"></div>{block}
</div><div class="legend">{legend}</div></div>"""


def windows(status: StatusEvent | None, block_after: int | None, reflection_block_after: int | None) -> str:
    if status is None:
        return '<p class="muted">no status yet: the processor has not folded a message of this key</p>'
    active, buffered = status.windows.active, status.windows.buffered
    return (bar("messages", active.messages.tokens, active.messages.threshold,
                buffered=buffered.observations.message_tokens, block_after=block_after,
                buffered_label=f"buffered in {buffered.observations.chunks} chunk(s)")
            + bar("observations", active.observations.tokens, active.observations.threshold,
                  buffered=buffered.reflection.input_observation_tokens, block_after=reflection_block_after,
                  buffered_label="covered by a buffered reflection"))


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, cls: str = "") -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def pager(total: int, page_no: int, size: int, link: str, param: str = "page") -> str:
    """Numbered paging; ``link`` is the page's URL without ``param``."""
    pages = max(1, -(-total // size))
    if pages == 1:
        return ""
    join = "&" if "?" in link else "?"
    def to(n: int, text: str) -> str:
        return f'<a href="{esc(link + join + param + "=" + str(n))}">{text}</a>'
    parts = [to(page_no - 1, "‹ newer") if page_no > 1 else '<span class="muted">‹ newer</span>',
             f"page {page_no} of {pages} ({total:,})",
             to(page_no + 1, "older ›") if page_no < pages else '<span class="muted">older ›</span>']
    return f'<nav class="pager" data-param="{esc(param)}">{" · ".join(parts)}</nav>'


def log_lines(text: str) -> str:
    """Observation text styled as the agent reads it: date groups, priorities, message boundaries."""
    out = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("Date:"):
            out.append(f'<div class="date">{esc(stripped)}</div>')
        elif stripped.startswith("---") and stripped.endswith("---"):
            out.append(f'<div class="boundary">{esc(stripped)}</div>')
        else:
            out.append(f'<div class="obs {_priority(stripped)}">{esc(line)}</div>')
    return "".join(out)


def _priority(line: str) -> str:
    for mark, cls in (("🔴", "p-high"), ("🟡", "p-med"), ("🟢", "p-low")):
        if mark in line:
            return cls
    return ""


def system_message(text: str, n: int) -> str:
    """One system message of the context: the instructions folded away, memory shown styled."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    if first.startswith("<working-memory>"):
        inner = text.strip().removeprefix("<working-memory>").removesuffix("</working-memory>")
        return f'<div class="wm"><div class="tag">working memory</div><pre>{esc(inner.strip())}</pre></div>'
    if "Date:" in text or text.lstrip().startswith("*"):
        return f'<div class="chunk" data-system="{n}">{log_lines(text)}</div>'
    summary = first if len(first) < 110 else first[:107] + "…"
    return (f'<details class="sys" id="sys-{n}"><summary>system message {n + 1}: {esc(summary)}</summary>'
            f"<pre>{esc(text)}</pre></details>")


def event_summary(event: LifecycleEvent) -> str:
    """The figures an operator reads off an event: tokens in and out, latency, what it covered."""
    kind = event.type
    if kind == "observation-start":
        return f"{tokens(event.tokens_to_observe)} tokens to {_op(event)}{_trigger(event)}"
    if kind == "observation-end":
        return (f"{tokens(event.tokens_observed)} → {tokens(event.observation_tokens)} tokens · "
                f"{event.duration_ms:,} ms · {len(event.message_ids)} messages{_trigger(event)}")
    if kind in ("observation-failed", "buffering-failed"):
        again = " · will retry" if event.retrying else ""
        return (f"{esc(event.error)} · {tokens(event.tokens_attempted)} tokens attempted · "
                f"{event.duration_ms:,} ms{again}")
    if kind == "buffering-start":
        return f"{tokens(event.tokens_to_buffer)} tokens to buffer"
    if kind == "buffering-end":
        return (f"{tokens(event.tokens_buffered)} → {tokens(event.buffered_tokens)} tokens buffered · "
                f"{event.duration_ms:,} ms · {len(event.message_ids)} messages")
    if kind == "activation":
        return (f"{event.chunks_activated} chunk(s) · {tokens(event.tokens_activated)} tokens activated → "
                f"{tokens(event.observation_tokens)} · {event.messages_activated} messages · "
                f"generation {event.generation}{_trigger(event)}")
    if kind == "thread-update":
        return f"title: {esc(event.old_title or '—')} → {esc(event.new_title)}"
    if kind == "observation-latched":
        return f"{event.failures} failures in a row · {esc(event.error)} · next try {when(event.retry_at)}"
    if kind in ("budget-exceeded", "budget-restored"):
        paused = " · no new cycle until allowed" if kind == "budget-exceeded" else " · waiting cycles start"
        return f"{tokens(event.used_tokens)} of {tokens(event.limit_tokens)} tokens on {esc(event.day)}{paused}"
    return ""


def _op(event: LifecycleEvent) -> str:
    return "reflect" if getattr(event, "operation_type", "") == "reflection" else "observe"


def _trigger(event: LifecycleEvent) -> str:
    trigger = getattr(event, "triggered_by", None)
    return f" · triggered by {esc(trigger)}" if trigger else ""


def message_text(text: str, limit: int = 600) -> str:
    shown = text if len(text) <= limit else text[: limit - 1] + "…"
    return f'<div class="msg-text">{esc(shown)}</div>'
