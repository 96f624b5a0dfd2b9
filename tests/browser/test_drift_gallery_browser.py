"""The Drift page's pattern-type gallery in Debian Chromium (Playwright), at 1400 px and 390 px:
every gallery map fits its column and nothing it draws is cut (issue 22: "14: [SE" was clipped
at 1400 px). The real /drift page, the embedded default against itself (identical weights: no
fine-tuning, no example checkpoint; the gallery draws the same maps), on a few examples.

The maps are drawn on a canvas (their colour bar needs it), so "no label clipped" is read from
the canvas itself: the canvas lies inside its column and is not squeezed, and no text (grey or
black pixels: labels and titles; the map's cells are blue) touches the canvas's edges (Vega
cuts a label that leaves the chart's box at that edge)."""

from __future__ import annotations

import re

import pytest

from browser_util import SHOTS, _launch, _wait_idle, playwright_session
from browser_util import wait_drawn

URL = ("/drift?drift_after=default&drift_max=6&drift_tab=Pattern+types"
       "&drift_gallery_type=vertical&drift_gallery_model=before")
CAPTION = re.compile(r"vertical \d\.\d\d · diagonal")

INK = """(c) => {
  // text ink: grey or black pixels (labels, titles; the map's cells and colour bar are blue)
  const w = c.width, h = c.height;
  const d = c.getContext("2d").getImageData(0, 0, w, h).data;
  let minX = w, minY = h, maxX = -1, maxY = -1;
  for (let y = 0; y < h; y += 1) {
    for (let x = 0; x < w; x += 1) {
      const i = 4 * (y * w + x);
      const lo = Math.min(d[i], d[i + 1], d[i + 2]), hi = Math.max(d[i], d[i + 1], d[i + 2]);
      if (d[i + 3] > 40 && hi < 200 && hi - lo < 24) {
        minX = Math.min(minX, x); maxX = Math.max(maxX, x);
        minY = Math.min(minY, y); maxY = Math.max(maxY, y);
      }
    }
  }
  const r = c.getBoundingClientRect();
  return { w, h, minX, minY, maxX, maxY, cssW: r.width, dpr: window.devicePixelRatio };
}"""


@pytest.fixture(scope="module")
def drift_server(server):
    """The app on an empty cache: no example checkpoint, none built (conftest.py)."""
    return server


def gallery_problems(page) -> list[str]:
    """What is wrong with the gallery's maps as drawn: a canvas wider than its column or
    outside it, squeezed, or with ink on its edge. Empty when every map fits whole."""
    columns = page.get_by_test_id("stColumn").filter(has=page.get_by_text(CAPTION))
    problems, seen = [], 0
    for c in range(columns.count()):
        col = columns.nth(c)
        box = col.bounding_box()
        for canvas in col.get_by_test_id("stVegaLiteChart").locator("canvas").all():
            seen += 1
            cb = canvas.bounding_box()
            ink = canvas.evaluate(INK)
            name = f"column {c + 1}, map {seen}"
            if cb["x"] < box["x"] - 0.5 or cb["x"] + cb["width"] > box["x"] + box["width"] + 0.5:
                problems.append(f"{name}: {cb['width']:.0f} px wide at x={cb['x']:.0f}, its "
                                f"column {box['width']:.0f} px at x={box['x']:.0f}")
            if abs(ink["cssW"] - ink["w"] / ink["dpr"]) > 1:
                problems.append(f"{name}: drawn {ink['w'] / ink['dpr']:.0f} px, shown "
                                f"{ink['cssW']:.0f} px (squeezed)")
            if ink["maxX"] < 0:
                problems.append(f"{name}: no text drawn")
            elif (ink["minX"] < 1 or ink["minY"] < 1 or ink["maxX"] > ink["w"] - 2
                  or ink["maxY"] > ink["h"] - 2):
                problems.append(f"{name}: text on the canvas's edge {ink} (a label cut)")
    if not seen:
        problems.append("no gallery map on the page")
    return problems


@pytest.mark.parametrize("width", [1400, 390])
def test_gallery_maps_fit_their_column_whole(drift_server, width):
    from playwright.sync_api import expect

    with playwright_session() as p:
        browser = _launch(p)
        try:
            page = browser.new_page(viewport={"width": width, "height": 1200})
            page.goto(drift_server + URL)
            _wait_idle(page, timeout=240_000)
            caption = page.get_by_text(CAPTION).first
            expect(caption).to_be_visible(timeout=240_000)
            _wait_idle(page, timeout=240_000)
            caption.scroll_into_view_if_needed()
            wait_drawn(page)  # Vega draws after the element mounts
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / f"drift-gallery-{width}.png"))
            assert gallery_problems(page) == []
        finally:
            browser.close()
