"""Issue 23 item 1 in a real browser: the memory view of a real worker, read by headless Chromium.

One worker (embedded chDB, so the reader and its ``/ui/`` run in the same process) with the demo's
small thresholds and the deterministic model takes the bundled multi-day conversation for one
tenant and two messages for another; Chromium (Debian's package, driven by Playwright) then signs
in with a token and checks the pages against what the reader's API says: the windows, the memory
as the agent gets it, the unobserved messages, what the last reflection dropped, the model calls
from the cost ledger, the paging, the live refresh while a message arrives, and that a token sees
nothing of the other tenant. The
thread page's screenshot is kept under ``test-artifacts/ui/`` (git-ignored).
"""

from __future__ import annotations

import asyncio
import os
import re
import time
import urllib.parse
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
import pytest_asyncio
from playwright import async_api as playwright_api
from playwright.async_api import expect

from schemas.messages import ChatMessage, TextPart
from streams.demo import DEMO_CONFIG, load_sample
from streams.services.worker_process import wait_http
from streams.topics import Topics
from tests.integration.pipeline import WorkerProcess, produce

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="module")]

CHROMIUM = os.environ.get("OM_CHROMIUM", "/usr/bin/chromium")  # the Makefile installs Debian's package
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "ui"
TOKEN_A, TOKEN_B = "view-token-a", "view-token-b"
THREAD_B_TEXT = "the other tenant's secret plan"
FIRST, LATER = 100, 5  # the conversation's first messages go in before the pages open, the rest live


class Pipeline:
    def __init__(self, worker: WorkerProcess, base: str, resource_a: str, resource_b: str, messages: list[ChatMessage],
                 thread_b: str) -> None:
        self.worker, self.base, self.messages, self.thread_b = worker, base, messages, thread_b
        self.resource_a, self.resource_b = resource_a, resource_b
        self.thread_a = messages[0].thread_id

    def page(self, route: str, **query: str) -> str:
        return f"{self.base}/ui/{route}" + ("?" + urllib.parse.urlencode(query) if query else "")

    async def api(self, what: str, *, missing_ok: bool = False) -> dict[str, Any]:
        """The reader's API answer for thread A; ``missing_ok``: {} while the sink has not stored it yet."""
        url = f"{self.base}/v1/threads/{self.thread_a}/{what}?resource_id={urllib.parse.quote(self.resource_a)}"
        async with aiohttp.ClientSession() as session, session.get(
                url, headers={"Authorization": f"Bearer {TOKEN_A}"}) as response:
            if missing_ok and response.status == 404:
                return {}
            assert response.status == 200, await response.text()
            return orjson.loads(await response.read())

    async def send(self, messages: list[ChatMessage]) -> None:
        topic = Topics.for_prefix(self.worker.prefix).messages
        await produce(self.worker.bootstrap, topic, [(f"thread:{m.thread_id}", m.to_bytes()) for m in messages])


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pipeline(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Pipeline]:
    tag = uuid.uuid4().hex[:6]
    resource_a, resource_b = f"r-view-{tag}", f"r-other-{tag}"
    tokens = {TOKEN_A: [resource_a], TOKEN_B: [resource_b]}
    worker = WorkerProcess(kafka_bootstrap, f"ui{tag}", DEMO_CONFIG, tmp_path_factory.mktemp("view"), partitions=1,
                           extra_env={"OM_READER_TOKENS": orjson.dumps(tokens).decode()})
    handle = worker.start()
    base = f"http://127.0.0.1:{handle.env['OM_READER_PORT']}"
    await asyncio.to_thread(wait_http, f"{base}/healthz", handle.proc, handle.log)
    thread_a, thread_b = f"t-view-{tag}", f"t-other-{tag}"
    messages = [m.model_copy(update={"thread_id": thread_a, "resource_id": resource_a}) for m in load_sample()]
    theirs = [ChatMessage(id=f"{thread_b}-m{i}", thread_id=thread_b, resource_id=resource_b, role="user",
                          created_at=messages[0].created_at + i, parts=[TextPart(text=THREAD_B_TEXT)]) for i in range(2)]
    view = Pipeline(worker, base, resource_a, resource_b, messages, thread_b)
    try:
        await _fill(view, messages[:FIRST] + theirs)
        yield view
    finally:
        await asyncio.to_thread(worker.stop)  # kill -9, then its topics are deleted


async def _fill(view: Pipeline, messages: list[ChatMessage]) -> None:
    """Send, then wait until the reader shows the last message folded after a reflection."""
    await view.send(messages)
    last = view.messages[FIRST - 1].id
    deadline = time.monotonic() + 60
    while True:
        status = (await view.api("status", missing_ok=True)).get("status") or {}
        if status.get("generation", 0) >= 1 and (status.get("applied_through") or {}).get("message_id") == last:
            context = await view.api("context")
            if context["observed_through"] is not None:
                return
        assert time.monotonic() < deadline, f"no reflection with every message folded within 60 s: {status}"
        await asyncio.sleep(0.2)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[Any]:
    async with playwright_api.async_playwright() as driver:
        launched = await driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            await launched.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def signed_in(browser: Any, pipeline: Pipeline) -> AsyncIterator[Any]:
    """A browser context signed in with token A through the form, as a person does (it lands on the
    token's one resource); each test opens its pages in it."""
    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    page = await context.new_page()
    await page.goto(pipeline.page(""))
    assert page.url.endswith("/ui/login")
    await page.fill("input[name=token]", TOKEN_A)
    await page.click("button[type=submit]")
    await page.wait_for_selector("table.threads")
    assert page.url.endswith(f"/ui/resource?resource={pipeline.resource_a}")
    await page.close()
    yield context
    await context.close()


async def texts(page: Any, selector: str) -> list[str]:
    return [t.strip() for t in await page.locator(selector).all_inner_texts()]


async def test_the_pages_show_the_memory_what_changed_and_page_through_messages(signed_in: Any,
                                                                                pipeline: Pipeline) -> None:
    view = pipeline
    status, context = (await view.api("status"))["status"], await view.api("context")
    page = await signed_in.new_page()
    await page.goto(view.page(""))

    # the resource page: the thread, its generation, its windows as the status reports them
    row = page.locator("table.threads tbody tr", has_text=view.thread_a)
    assert await row.count() == 1
    await expect(row.locator("td").nth(3)).to_have_text(str(status["generation"]))  # live: once its snapshot lands
    for name in ("messages", "observations"):
        window = row.locator(f'.window[data-window="{name}"]')
        assert await window.get_attribute("data-tokens") == str(status["windows"]["active"][name]["tokens"])
        assert await window.get_attribute("data-threshold") == str(status["windows"]["active"][name]["threshold"])
    assert await page.locator(".window .line.block").count() == 2  # block-after lines: async buffering is on
    buffered = status["windows"]["buffered"]
    for name, tokens in (("messages", buffered["observations"]["message_tokens"]),
                         ("observations", buffered["reflection"]["input_observation_tokens"])):
        width = await row.locator(f'.window[data-window="{name}"] .buffered').get_attribute("style")
        assert (width != "width:0.00%") == (tokens > 0), (name, width, tokens)  # the hatched, buffered part

    # the cost ledger by day: the deterministic model's calls, with tokens and no price
    observer_costs = page.locator("#costs tbody tr", has_text="observer")
    await expect(observer_costs).to_have_count(1)  # live: the ledger's rows land from the results topic
    cells = await observer_costs.locator("td").all_inner_texts()
    assert cells[2] == "om-deterministic/observer" and int(cells[3]) >= 1 and cells[8] == "—"
    assert int(cells[4].replace(",", "")) > 0 and int(cells[7].replace(",", "")) > 0
    assert cells[5] == cells[6] == "0"  # cached and cache-written input tokens: the model has no prompt cache

    await row.locator("a").first.click()
    await page.wait_for_selector("#changes")
    assert "model call(s)" in await page.locator("#windows .spend").inner_text()
    ended = page.locator("#timeline tbody tr", has_text="observation-end").first
    assert re.fullmatch(r"[\d,]+ in · [\d,]+ out · —( · \d+ attempts)?", await ended.locator(".call").inner_text())

    # the memory as the agent gets it: every observation line of the context, grouped by date
    memory = "\n".join(context["system"])
    bullets = [line for line in memory.splitlines() if line.lstrip().startswith("*")]
    dates = [line.strip() for line in memory.splitlines() if line.strip().startswith("Date:")]
    assert bullets and dates
    assert len(await texts(page, "#memory .obs")) == len(bullets)
    assert await texts(page, "#memory .date") == dates
    assert await page.locator("#memory .obs.p-high").count() >= 1

    # the buffered chunks waiting are the ones the status counts
    assert await page.locator("#chunks table.chunks tbody tr").count() == buffered["observations"]["chunks"]

    # the unobserved messages are the context's messages, newest first
    unobserved = [m["id"] for m in context["messages"]]
    shown = [t.split()[0] for t in await texts(page, "#unobserved table.messages tbody tr")]
    assert shown == list(reversed(unobserved))[:20]

    # what changed: the last reflection, with what it no longer holds, and observations with their messages
    reflection = page.locator('article[data-kind="reflection"]').first
    assert "Reflection into generation" in await reflection.locator("h3").inner_text()
    dropped = await reflection.locator(".diff .del").count()
    assert dropped > 0
    assert f"{dropped} line(s) no longer held" in await reflection.locator(".why").inner_text()
    observed = page.locator('article[data-kind="observation"], article[data-kind="activation"]').first
    covered = int((await observed.locator("p", has_text="covered").inner_text()).split()[1])
    assert await observed.locator(".diff .add").count() >= 1
    await observed.locator("a", has_text="the messages").click()
    await page.wait_for_selector("table.messages")
    cycle_rows = await texts(page, "table.messages tbody tr")
    assert len(cycle_rows) == min(covered, 50)
    await page.go_back()
    await page.wait_for_selector("#timeline")
    assert await page.locator("#timeline tbody tr", has_text="reflection").count() >= 1

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / "thread.png"), full_page=True)

    # paging: 100 messages at 50 a page; the older page ends with the first message
    await page.goto(view.page("messages", resource=view.resource_a, thread=view.thread_a))
    assert "page 1 of 2 (100)" in await page.locator(".pager").inner_text()
    assert (await texts(page, "table.messages tbody tr"))[0].startswith(view.messages[FIRST - 1].id)
    await page.click(".pager >> text=older ›")
    await page.wait_for_url("**page=2")
    assert (await texts(page, "table.messages tbody tr"))[-1].startswith(view.messages[0].id)


async def test_the_thread_page_updates_in_place_while_messages_arrive(signed_in: Any, pipeline: Pipeline) -> None:
    view = pipeline
    page = await signed_in.new_page()
    await page.goto(view.page("thread", resource=view.resource_a, thread=view.thread_a))
    await page.wait_for_selector("#live.on")
    await page.evaluate("window.sameDocument = true")
    arriving = view.messages[FIRST:FIRST + LATER]
    await view.send(arriving)
    await page.wait_for_selector(f'[id="m-{arriving[-1].id}"]', timeout=30_000)
    assert await page.evaluate("window.sameDocument") is True  # swapped in place, not reloaded


async def test_a_token_sees_nothing_of_another_tenant(browser: Any, signed_in: Any, pipeline: Pipeline) -> None:
    view = pipeline
    page = await signed_in.new_page()
    await page.goto(view.page(""))
    assert view.thread_b not in await page.content()
    refused = [
        (view.page("resource", resource=view.resource_b), 403),
        (view.page("thread", resource=view.resource_b, thread=view.thread_b), 403),
        (view.page("thread", resource=view.resource_a, thread=view.thread_b), 404),
        (view.page("messages", resource=view.resource_a, thread=view.thread_b), 404),
        (view.page("marker", resource=view.resource_b), 403),
    ]
    for url, code in refused:
        response = await page.goto(url)
        assert response.status == code, url
        body = await page.content()
        assert THREAD_B_TEXT not in body and f"{view.thread_b}-m0" not in body, url

    anonymous = await (await browser.new_context()).new_page()
    await anonymous.goto(view.page("thread", resource=view.resource_a, thread=view.thread_a))
    assert anonymous.url.endswith("/ui/login")
    await anonymous.fill("input[name=token]", "not-a-token")
    await anonymous.click("button[type=submit]")
    assert "unknown token" in await anonymous.locator(".error").inner_text()

    # the other token, as a bearer header: its own resource only
    other = await (await browser.new_context(extra_http_headers={"Authorization": f"Bearer {TOKEN_B}"})).new_page()
    await other.goto(view.page(""))
    assert await other.locator("table.threads tbody tr").count() == 1
    assert view.thread_b in await other.content() and view.thread_a not in await other.content()
    response = await other.goto(view.page("thread", resource=view.resource_a, thread=view.thread_a))
    assert response.status == 403
