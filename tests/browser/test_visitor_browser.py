"""What a new visitor meets, in Debian Chromium (Playwright), issue 22: a colour bar that stays
after the page's URL changes in place (a tab click), and no request to any host but the app's
own server (every other host is blocked, as offline)."""

from __future__ import annotations

import io
from urllib.parse import urlparse

import pytest

from browser_util import _launch, _wait_idle, playwright_session
from browser_util import wait_drawn

pytest.importorskip("playwright.sync_api", reason="playwright is not installed: pip install "
                    "-r requirements-dev.txt to run the browser tests")

# every SVG paint reference inside a Vega chart that points at another document than this one
# (Vega's SVG renderer writes url(<page URL when drawn>#gradient_0))
BROKEN_REFS = """() => {
  const here = location.href.split('#')[0];
  const bad = [];
  const painted = '.vega-embed svg [fill^="url("], .vega-embed svg [stroke^="url("]';
  for (const el of document.querySelectorAll(painted)) {
    for (const attr of ['fill', 'stroke']) {
      const v = el.getAttribute(attr) || '';
      const m = v.match(/^url\\((.*)#([^)]*)\\)$/);
      if (!m) continue;
      const doc = m[1] ? new URL(m[1], here).href.split('#')[0] : here;
      if (doc !== here || !document.getElementById(m[2])) bad.push(v);
    }
  }
  return bad;
}"""


def _coloured_columns(png: bytes, right: int) -> int:
    """Clearly coloured pixels in the rightmost ``right`` columns of a screenshot."""
    from PIL import Image

    img = Image.open(io.BytesIO(png)).convert("RGB")
    w, h = img.size
    box = img.crop((max(0, w - right), 0, w, h))
    return sum(1 for r, g, b in box.getdata() if max(r, g, b) - min(r, g, b) > 60)


# the app on an empty cache (the default model): the tier's ``server`` (conftest.py)


def test_colour_bar_stays_after_an_in_page_url_change(server):
    """/noop: the Heatmaps tab, then Entropy, then Heatmaps again (each click rewrites the
    page's URL in place): no chart paints with a reference into another document, and the
    heatmap's legend still shows its colour bar."""
    from playwright.sync_api import expect

    with playwright_session() as p:
        browser = _launch(p)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{server}/noop", timeout=120_000)
            heatmaps = page.get_by_role("tab", name="Heatmaps")
            expect(heatmaps).to_be_visible(timeout=300_000)
            _wait_idle(page, timeout=300_000)
            for tab in ("Heatmaps", "Entropy", "Heatmaps"):
                page.get_by_role("tab", name=tab).click()
                _wait_idle(page)
                assert f"noop_tab={tab}" in page.url
                wait_drawn(page)
                assert page.evaluate(BROKEN_REFS) == [], f"after the {tab} tab"
            chart = page.locator("[role='tabpanel']:not([hidden]) .vega-embed").first
            expect(chart).to_be_visible(timeout=60_000)
            # the legend's colour bar is painted: coloured pixels at the chart's right edge,
            # where the vertical gradient legend sits beside the layers x heads grid
            assert _coloured_columns(chart.screenshot(), 60) > 100
        finally:
            browser.close()


def test_no_request_leaves_the_app_server(server):
    """Every page opened with every other host blocked: no request leaves, none fails, no
    console error about a refused load (the favicon was a Material icon that the browser
    fetched from fonts.gstatic.com)."""

    own = urlparse(server).netloc
    outside, failed, console = [], [], []
    with playwright_session() as p:
        browser = _launch(p)
        try:
            ctx = browser.new_context(viewport={"width": 1400, "height": 1000})

            def route(r):
                host = urlparse(r.request.url).netloc
                if r.request.url.startswith(("data:", "blob:")) or host == own:
                    return r.continue_()
                outside.append(r.request.url)
                return r.abort()

            ctx.route("**/*", route)
            page = ctx.new_page()
            page.on("requestfailed", lambda r: failed.append(r.url))
            page.on("console", lambda m: m.type == "error" and console.append(m.text))
            for path in ("/", "/attention", "/noop", "/aspects", "/drift", "/syntax", "/report"):
                page.goto(f"{server}{path}", timeout=120_000)
                wait_drawn(page, timeout=240_000)
        finally:
            browser.close()
    assert outside == [], outside
    assert [u for u in failed if urlparse(u).netloc != own] == []
    # (Streamlit's own probe of /<page>/_stcore/health answers 404 from this server: not a
    # request elsewhere; a blocked request would log net::ERR_FAILED)
    assert not [c for c in console if "net::ERR" in c], console
