"""The Head importance page in Debian Chromium (Playwright): on a tiny stand-in example
checkpoint, the layers x heads map draws its coloured squares inside the page at a phone's
width (390 px) and at a desktop's (1400 px)."""

from __future__ import annotations


import pytest

from browser_util import SHOTS, _launch, _saturated_pixels, _wait_idle, playwright_session
from browser_util import wait_drawn


@pytest.fixture(scope="module")
def server(example_server):
    """The tier's app server with the tiny stand-in example checkpoint (conftest.py)."""
    return example_server


def _edge_ink(png: bytes, columns: int = 2, below: float = 0.0) -> int:
    """Dark pixels (text, marks) in the image's last ``columns`` columns, in its part below
    the fraction ``below`` of its height: drawing cut by the chart's edge."""
    import io

    from PIL import Image

    img = Image.open(io.BytesIO(png)).convert("L")
    w, h = img.size
    return sum(1 for x in range(w - columns, w) for y in range(int(below * h), h)
               if img.getpixel((x, y)) < 160)


@pytest.mark.parametrize("width", [390, 1400])
def test_the_map_draws(server, width):
    from playwright.sync_api import expect

    SHOTS.mkdir(parents=True, exist_ok=True)
    errors = []
    with playwright_session() as p:
        browser = _launch(p)
        try:
            page = browser.new_page(viewport={"width": width, "height": 1600})
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(server + "/importance?importance_metric=mean+loss")  # never all 0
            _wait_idle(page, timeout=240_000)
            page.get_by_text("Reading", exact=True).wait_for(timeout=120_000)
            chart = page.get_by_test_id("stVegaLiteChart").first
            chart.wait_for(timeout=60_000)
            chart.scroll_into_view_if_needed()
            wait_drawn(page)  # vega draws after the element appears
            box = chart.bounding_box()
            assert box and 150 < box["width"] <= width and box["height"] > 100, box
            shot = chart.screenshot()
            (SHOTS / f"importance-map-{width}.png").write_bytes(shot)
            assert _saturated_pixels(shot) > 500  # red/blue squares, not a blank frame
            # issue 49: no legend cut at the chart's right edge (the border legend's "both" was,
            # at 1400 px): the legends' band, under the map, ends blank; the borders are said
            # in words under the chart
            assert _edge_ink(shot, below=0.6) == 0
            expect(page.get_by_text("Borders: black, a top head of the Aspect heads page")
                   ).to_be_visible()
            # ... and the tiles' labels and values whole (five side by side cut them at 1400)
            cut = page.evaluate("""() => [...document.querySelectorAll(
                "[data-testid='stMetricLabel'] p, [data-testid='stMetricValue'] div")]
                .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)""")
            assert cut == [], cut
            body = page.evaluate("document.documentElement.scrollWidth")
            assert body <= width + 1  # nothing pushes the page sideways
            assert not errors, errors
        finally:
            browser.close()


@pytest.mark.parametrize("width", [390, 1400])
def test_the_one_example_map_fits(server, width):
    """The per-example view (a Predictions row's link): its map inside the page, its legend
    whole, its tiles uncut, nothing pushing the page sideways, at a phone's and a desktop's
    width."""
    from urllib.parse import urlencode

    from ui.importance import state as S

    query = urlencode({S.SCOPE: S.ONE, S.MODEL: S.EXAMPLE, S.ASPECT: "service",
                       S.TEXT: "the food was great but the service was slow",
                       S.LABEL: "negative", S.MEASURE: "loss"})
    SHOTS.mkdir(parents=True, exist_ok=True)
    errors = []
    with playwright_session() as p:
        browser = _launch(p)
        try:
            page = browser.new_page(viewport={"width": width, "height": 1600})
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(server + "/importance?" + query)
            _wait_idle(page, timeout=240_000)
            page.get_by_text("Reading", exact=True).wait_for(timeout=120_000)
            chart = page.get_by_test_id("stVegaLiteChart").first
            chart.wait_for(timeout=60_000)
            chart.scroll_into_view_if_needed()
            wait_drawn(page)
            box = chart.bounding_box()
            assert box and 150 < box["width"] <= width and box["height"] > 100, box
            shot = chart.screenshot()
            (SHOTS / f"importance-one-map-{width}.png").write_bytes(shot)
            assert _saturated_pixels(shot) > 500
            assert _edge_ink(shot, below=0.6) == 0
            cut = page.evaluate("""() => [...document.querySelectorAll(
                "[data-testid='stMetricLabel'] p, [data-testid='stMetricValue'] div")]
                .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)""")
            assert cut == [], cut
            assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
            assert not errors, errors
        finally:
            browser.close()
