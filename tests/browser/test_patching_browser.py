"""The Causal patching page in Debian Chromium (Playwright), on a tiny stand-in example: at
390 px and 1400 px it opens with its heads map drawn inside its column, and so are the causal
tracing maps (layers x tokens) of its second tab; the page never scrolls sideways."""

from __future__ import annotations

import pytest

from test_browser import _launch, _wait_idle
from browser_util import playwright_session
from browser_util import wait_drawn
from test_fit_browser import OVERFLOW

pytest.importorskip("playwright.sync_api", reason="playwright is not installed: pip install "
                    "-r requirements-dev.txt to run the browser tests")


@pytest.mark.parametrize("width", [1400, 390])
def test_patching_page_fits_its_column(example_server, width):
    from playwright.sync_api import expect

    with playwright_session() as p:
        browser = _launch(p)
        try:
            page = browser.new_page(viewport={"width": width, "height": 1000})
            page.goto(f"{example_server}/patching", timeout=120_000)
            charts = page.locator(".vega-embed")
            expect(charts.first).to_be_visible(timeout=300_000)
            _wait_idle(page, timeout=300_000)
            # the heads map is drawn (Vega's canvas or SVG, not empty)
            box = charts.first.locator("canvas, svg").first.bounding_box()
            assert box is not None and box["width"] > 100 and box["height"] > 50
            wait_drawn(page)
            assert page.evaluate(OVERFLOW) == []
            page.get_by_role("tab", name="Layers x positions").click()
            expect(page.locator(".vega-embed").nth(1)).to_be_visible(timeout=60_000)
            wait_drawn(page)
            assert page.evaluate(OVERFLOW) == []
            assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
        finally:
            browser.close()
