"""streams/ui/render.py: stored text is escaped, windows are drawn to scale, paging links."""

from __future__ import annotations

import re

from streams.ui.render import bar, log_lines, pager, system_message, url


def test_stored_text_cannot_inject_markup() -> None:
    hostile = '<script>alert(1)</script> "quoted" & <img src=x onerror=y>'
    for html in (log_lines(f"* 🔴 {hostile}"), system_message(hostile, 0),
                 system_message(f"<working-memory>{hostile}</working-memory>", 1)):
        assert "<script>" not in html and "<img" not in html
        assert "&lt;script&gt;" in html


def test_observation_lines_are_grouped_and_prioritised() -> None:
    html = log_lines("Date: Nov 27, 2026\n* 🔴 (09:02) a\n* 🟡 (09:03) b\n* 🟢 (09:04) c\n--- message boundary (x) ---\n* d")
    assert '<div class="date">Date: Nov 27, 2026</div>' in html
    assert [m for m in re.findall(r'class="obs ([^"]*)"', html)] == ["p-high", "p-med", "p-low", ""]
    assert 'class="boundary"' in html


def test_a_window_is_drawn_against_its_threshold_and_block_line() -> None:
    html = bar("messages", 270, 300, buffered=90, block_after=360)
    widths = dict(re.findall(r'class="(fill[^"]*|buffered)" style="width:([\d.]+)%"', html))
    lines = dict(re.findall(r'class="line (threshold|block)" style="left:([\d.]+)%"', html))
    scale = 360 * 1.08
    assert float(widths["fill"]) == round(100 * 270 / scale, 2)
    assert float(widths["buffered"]) == round(100 * 90 / scale, 2)
    assert float(lines["threshold"]) == round(100 * 300 / scale, 2)
    assert float(lines["block"]) == round(100 * 360 / scale, 2)
    assert "fill over" in bar("messages", 301, 300)


def test_pager_links_keep_the_page_url_and_name_their_parameter() -> None:
    assert pager(10, 1, 50, "/ui/x?a=1") == ""
    html = pager(120, 2, 50, url("thread", resource="r/1", thread="t 1"), "events")
    assert "page 2 of 3 (120)" in html
    assert 'href="/ui/thread?resource=r%2F1&amp;thread=t+1&amp;events=1"' in html
    assert 'href="/ui/thread?resource=r%2F1&amp;thread=t+1&amp;events=3"' in html
