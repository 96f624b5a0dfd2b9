"""The Head atlas in Debian Chromium (Playwright), the page a first visitor sees: the example's
precomputed grid draws its coloured squares at a phone's width (390 px) and a desktop's
(1400 px) without pushing the page sideways, a click on a square opens that head's evidence,
and hostile URL values (markup in a filter, a threshold that is no number, a head that does not
exist) change nothing but the view."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from browser_util import (SHOTS, URL_HAS, _launch, _saturated_pixels, _wait_idle,
                          playwright_session, scroll_into_view, wait_drawn)

HOSTILE = {"atlas_roles": "<img src=x onerror=alert(1)>", "atlas_rule_noop": "abc",
           "atlas_layer": "99", "atlas_head": "-1", "atlas_use": "<b>x</b>"}


def _open(p, url: str, width: int):
    browser = _launch(p)
    page = browser.new_page(viewport={"width": width, "height": 1800})
    errors, dialogs = [], []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(url)
    _wait_idle(page, timeout=240_000)
    page.get_by_text("One head's evidence", exact=True).wait_for(timeout=120_000)
    return browser, page, errors, dialogs


@pytest.mark.parametrize("width", [390, 1400])
def test_the_grid_draws_and_a_click_opens_a_heads_evidence(server, width):
    """On a phone the page is opened by a link with hostile values (markup in a filter, a
    threshold that is no number, heads that do not exist): they change nothing but the view."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    query = f"?{urlencode(HOSTILE)}" if width == 390 else ""
    with playwright_session() as p:
        browser, page, errors, dialogs = _open(p, f"{server}/{query}", width)
        try:
            assert page.locator("img[src='x']").count() == 0 and not dialogs
            assert page.get_by_test_id("stException").count() == 0
            assert page.locator("h1").first.inner_text() == "Head atlas"
            assert page.get_by_text("Precomputed for the example checkpoint").count() >= 1
            chart = page.get_by_test_id("stVegaLiteChart").first
            scroll_into_view(chart)
            wait_drawn(page, charts=2)  # the grids after and before fine-tuning
            box = chart.bounding_box()
            assert box and 200 < box["width"] <= width and box["height"] > 150, box
            shot = chart.screenshot()
            (SHOTS / f"atlas-grid-{width}.png").write_bytes(shot)
            assert _saturated_pixels(shot) > 300  # coloured squares, not a blank frame
            assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
            squares = chart.locator("g.mark-symbol.role-mark path")
            assert squares.count() == 72  # 6 layers x 12 heads
            # the card opens on the most used head (4-5); a click on layer 2, head 8 (the
            # squares are drawn layer by layer) opens that one, and the URL keeps it
            assert page.get_by_text("Head 4-5:", exact=False).count() >= 1
            square = squares.nth(12 * 1 + 7)
            scroll_into_view(square)
            square.click(force=True)
            page.get_by_text("Head 2-8:", exact=False).first.wait_for(timeout=60_000)
            page.wait_for_function(URL_HAS, arg={"atlas_layer": "2", "atlas_head": "8"},
                                   timeout=30_000)
            assert not errors, errors
        finally:
            browser.close()

