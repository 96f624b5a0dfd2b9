"""The Features page in Debian Chromium (Playwright) at 390 px and 1400 px: it opens on the
example's precomputed dictionary (no checkpoint built, nothing trained): the quality numbers,
the reading, the most frequent feature's contexts coloured by activation and its histogram
drawn inside its column; a hostile, long sidebar text never becomes markup and nothing scrolls
sideways."""

from __future__ import annotations

import pytest

from test_browser import _launch, _wait_idle
from browser_util import playwright_session
from test_fit_browser import OVERFLOW

pytest.importorskip("playwright.sync_api", reason="playwright is not installed: pip install "
                    "-r requirements-dev.txt to run the browser tests")

HOSTILE = ("<img src=x onerror=alert(1)> " + "supercalifragilistic" * 12 + " the food "
           "was great")


@pytest.mark.parametrize("width", [1400, 390])
def test_features_page_opens_on_the_example_and_fits(server, width):
    from urllib.parse import quote

    from playwright.sync_api import expect

    with playwright_session() as p:
        browser = _launch(p)
        try:
            page = browser.new_page(viewport={"width": width, "height": 1000})
            alerts = []
            page.on("dialog", lambda d: (alerts.append(d.message), d.dismiss()))
            page.goto(f"{server}/features?a={quote(HOSTILE)}", timeout=120_000)
            expect(page.get_by_text("Precomputed for the example checkpoint", exact=False)
                   ).to_be_visible(timeout=300_000)
            _wait_idle(page, timeout=300_000)
            expect(page.get_by_text("Variance explained (held-out)")).to_be_visible()
            expect(page.locator(".fx-list .fx-peak").first).to_be_visible(timeout=60_000)
            expect(page.locator(".vega-embed").first).to_be_visible(timeout=60_000)
            page.wait_for_timeout(1000)
            assert page.evaluate(OVERFLOW) == []
            chart = page.locator(".vega-embed").first.bounding_box()
            assert 0.5 * min(width, 700) < chart["width"] <= width
            assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
            assert page.locator("img[src=x]").count() == 0 and alerts == []
        finally:
            browser.close()
