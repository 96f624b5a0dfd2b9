"""The Search page in Debian Chromium (Playwright) at 390 px and 1400 px: the default view (a
token of the sidebar's default sentence over the bundled treebank) shows its matches with the
match highlighted, and the label histogram is drawn inside its column (nothing scrolls
sideways)."""

from __future__ import annotations

import pytest

from test_browser import _launch, _wait_idle
from browser_util import playwright_session
from test_fit_browser import OVERFLOW

pytest.importorskip("playwright.sync_api", reason="playwright is not installed: pip install "
                    "-r requirements-dev.txt to run the browser tests")


@pytest.mark.parametrize("width", [1400, 390])
def test_search_page_shows_matches_and_fits(server, width):
    from playwright.sync_api import expect

    with playwright_session() as p:
        browser = _launch(p)
        try:
            page = browser.new_page(viewport={"width": width, "height": 1000})
            page.goto(f"{server}/search", timeout=120_000)
            heading = page.get_by_text("The 20 nearest tokens to «the»")
            expect(heading).to_be_visible(timeout=300_000)
            _wait_idle(page, timeout=300_000)
            marks = page.locator("mark")
            # to_have_count retries: a rerun can replace the matches' html for a moment after
            # the heading showed (once at 390 px on a busy machine: 0 marks counted)
            expect(marks).to_have_count(20, timeout=60_000)
            assert all(marks.nth(k).inner_text().strip() for k in range(20))
            expect(page.locator(".vega-embed").first).to_be_visible(timeout=60_000)
            page.wait_for_timeout(1000)
            assert page.evaluate(OVERFLOW) == []
            chart = page.locator(".vega-embed").first.bounding_box()
            assert chart["width"] <= width and chart["width"] > 0.5 * min(width, 700)
            assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
        finally:
            browser.close()
