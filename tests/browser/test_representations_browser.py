"""The Representations page in Debian Chromium (Playwright): a deep link whose text is hostile
(HTML, a template literal, quotes, backslashes) and long enough for 512 tokens draws the
per-layer scatter of both models at 1400 and at 390 pixels; the layer slider redraws it in the
browser without a rerun; nothing in the text runs."""

from __future__ import annotations

from urllib.parse import urlencode

from browser_util import SHOTS, _launch, _saturated_pixels, _wait_idle, playwright_session
from browser_util import wait_drawn, COUNT_RUNS

HOSTILE = '<b>x</b> ${x} "q" \'s\' back\\slash <img src=x onerror=alert(1)> '
TEXT = HOSTILE * 60  # far more than 512 tokens: cut to the model's maximum


def test_scatter_with_hostile_tokens_at_512_tokens(server):  # noqa: F811
    from playwright.sync_api import expect

    SHOTS.mkdir(parents=True, exist_ok=True)
    dialogs, errors = [], []
    link = "/representations?" + urlencode({"mode": "One text", "a": TEXT, "rep_n": 8})
    with playwright_session() as p:
        browser = _launch(p)
        try:
            for width in (1400, 390):
                page = browser.new_page(viewport={"width": width, "height": 1200})
                page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.goto(server + link)
                _wait_idle(page, timeout=300_000)
                # side_by_side draws a wide and a stacked copy; the screen width shows one
                chart = page.get_by_test_id("stVegaLiteChart").filter(visible=True).first
                expect(chart).to_be_visible(timeout=120_000)
                wait_drawn(page)
                # the caption counts the tokens the chart was drawn for
                expect(page.get_by_text("512 tokens, 7 layers", exact=False)).to_be_visible()
                chart.scroll_into_view_if_needed()
                before = chart.screenshot()
                assert _saturated_pixels(before) > 500, "no coloured points drawn"
                # the layer slider is a Vega binding: moving it redraws in the browser
                slider = chart.locator("input[type=range]").first
                expect(slider).to_have_value("6")
                _wait_idle(page)  # any late rerun of the page's own is over
                page.evaluate(COUNT_RUNS)
                slider.evaluate("(s) => { s.value = '0'; s.dispatchEvent(new Event('input', "
                                "{bubbles: true})); }")
                wait_drawn(page)  # redrawn in the browser ...
                assert page.evaluate("window.__runs") == 0  # ... with no script run at all
                after = chart.screenshot()
                assert after != before
                with open(SHOTS / f"representations_{width}.png", "wb") as fh:
                    fh.write(after)
                if width < 640:  # on a phone the panels stack: nothing is cut off or scrolls
                    assert chart.evaluate("(e) => e.scrollWidth <= e.clientWidth + 1")
                    box = chart.bounding_box()
                    assert box["x"] >= 0 and box["x"] + box["width"] <= width
                # the hostile text became no element anywhere in the chart
                assert chart.locator("b, img").count() == 0
                page.close()
        finally:
            browser.close()
    assert not dialogs, dialogs
    assert not errors, errors


def _colours(png: bytes, min_pixels: int = 20) -> int:
    """Distinct clearly coloured hues of a screenshot (quantised), each seen often enough."""
    import io
    from collections import Counter

    from PIL import Image

    img = Image.open(io.BytesIO(png)).convert("RGB")
    seen = Counter((r // 32, g // 32, b // 32) for r, g, b in img.getdata()
                   if max(r, g, b) - min(r, g, b) > 60)
    return sum(1 for n in seen.values() if n >= min_pixels)


def test_one_input_from_the_absa_sample_draws_by_role(server):  # noqa: F811
    """A deep link to an ABSA sample review asked about food draws its tokens in the role
    colours (aspect, opinion, other aspect, other, asked category, special: several hues)."""
    from playwright.sync_api import expect

    SHOTS.mkdir(parents=True, exist_ok=True)
    link = "/representations?" + urlencode({"rep_source": "absa", "rep_example": "s001",
                                            "rep_category": "food", "rep_n": 8})
    errors = []
    with playwright_session() as p:
        browser = _launch(p)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1200})
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(server + link)
            _wait_idle(page, timeout=300_000)
            chart = page.get_by_test_id("stVegaLiteChart").filter(visible=True).first
            expect(chart).to_be_visible(timeout=120_000)
            wait_drawn(page)
            expect(page.get_by_text("14 tokens, 7 layers", exact=False)).to_be_visible()
            expect(page.get_by_text("aspect term (pasta)", exact=False)).to_be_visible()
            chart.scroll_into_view_if_needed()
            shot = chart.screenshot()
            assert _saturated_pixels(shot) > 300, "no coloured points drawn"
            assert _colours(shot) >= 4, "the tokens are not drawn in the role colours"
            with open(SHOTS / "representations_roles.png", "wb") as fh:
                fh.write(shot)
        finally:
            browser.close()
    assert not errors, errors
