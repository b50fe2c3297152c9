// The memory view's live refresh: poll the page's marker; when it moves (an event or a message
// landed), fetch this same page and swap its <main> in place — no reload, the scroll position and
// the open <details> stay. The page works without this script.
(function () {
  "use strict";
  const POLL_MS = 2000;
  const live = document.getElementById("live");
  if (!live) return;
  let marker = live.dataset.marker;
  let busy = false;

  async function refresh() {
    const response = await fetch(window.location.href, { credentials: "same-origin" });
    if (!response.ok) return;
    const doc = new DOMParser().parseFromString(await response.text(), "text/html");
    const fresh = doc.getElementById("view");
    const view = document.getElementById("view");
    if (!fresh || !view) return;
    const open = Array.from(view.querySelectorAll("details[open][id]")).map((d) => d.id);
    const y = window.scrollY;
    view.replaceChildren(...fresh.childNodes);
    open.forEach((id) => { const d = document.getElementById(id); if (d) d.open = true; });
    window.scrollTo(0, y);
  }

  async function poll() {
    if (busy) return;
    busy = true;
    try {
      const response = await fetch(live.dataset.url, { credentials: "same-origin" });
      if (!response.ok) { live.className = "stale"; live.textContent = "offline"; return; }
      const body = await response.json();
      if (body.marker !== marker) {
        await refresh();
        marker = body.marker;
        live.dataset.marker = marker;
      }
      live.className = "on";
      live.textContent = "live · " + new Date().toLocaleTimeString();
    } catch (error) {
      live.className = "stale";
      live.textContent = "offline";
    } finally {
      busy = false;
    }
  }

  setInterval(poll, POLL_MS);
  poll();
})();
