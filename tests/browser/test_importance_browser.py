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


@pytest.mark.parametrize("width", [390, 1400])
def test_the_map_draws(server, width):
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
            body = page.evaluate("document.documentElement.scrollWidth")
            assert body <= width + 1  # nothing pushes the page sideways
            assert not errors, errors
        finally:
            browser.close()
