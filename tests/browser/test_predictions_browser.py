"""The Predictions page in Debian Chromium at a phone's width (390 px) and a desktop's (1400 px),
on the tiny stand-in example: the table and the confusion matrix draw inside the page; an edit
typed with hostile, long text (HTML, a template literal, quotes, backslashes, backticks) shows
both inputs as text, shaded by the attribution with the changed words outlined, inside the
screen; a link's hostile filter word is kept as text; nothing pushes the page sideways."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from browser_util import SHOTS, _launch, _saturated_pixels, _wait_idle, playwright_session

HOSTILE = 'The <b>x</b> soup ${x} was "cold" \\ and `rude` <img src=x onerror=alert(1)> '


@pytest.fixture(scope="module")
def server(example_server):
    """The tier's app server with the tiny stand-in example checkpoint (conftest.py)."""
    return example_server


@pytest.mark.parametrize("width", [390, 1400])
def test_table_confusion_and_a_hostile_edit(server, width):
    from playwright.sync_api import expect

    SHOTS.mkdir(parents=True, exist_ok=True)
    dialogs, errors = [], []
    link = "/predictions?" + urlencode({"pred_tab": "Edit and compare",
                                        "pf_contains": "<img src=x onerror=alert(2)>"})
    with playwright_session() as p:
        browser = _launch(p)
        try:
            page = browser.new_page(viewport={"width": width, "height": 1600})
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(server + link)
            box = page.get_by_label("Text (edit freely)")
            expect(box).to_have_count(1, timeout=300_000)  # once the live run is done
            _wait_idle(page, timeout=300_000)
            box.fill(HOSTILE * 2)  # 70 tokens: the tiny stand-in reads at most 128
            box.press("Enter")
            _wait_idle(page, timeout=300_000)
            alerts = page.get_by_test_id("stAlertContentError").all_text_contents()
            assert not alerts, alerts
            chips = page.locator(".pred-edit")
            expect(chips).to_have_count(2, timeout=120_000)
            words = chips.nth(1).locator(".pred-w").all_text_contents()
            assert "<" in words and "$" in words and '"' in words and "`" in words
            assert chips.locator("b, img").count() == 0
            assert page.locator("img[src='x']").count() == 0
            assert chips.nth(1).locator(".pred-w.changed").count() > 10  # the typed words
            for k in range(2):
                b = chips.nth(k).bounding_box()
                assert b and b["x"] >= 0 and b["x"] + b["width"] <= width + 1, b
            page.get_by_role("tab", name="Table").click()
            _wait_idle(page)
            # the link's filter word is kept as text: no example holds it
            assert page.get_by_text("This slice: none of the").count() == 1
            grid = page.get_by_test_id("stDataFrame").first
            grid.scroll_into_view_if_needed()
            g = grid.bounding_box()
            assert g and g["width"] <= width + 1
            chart = page.get_by_test_id("stVegaLiteChart").first
            chart.scroll_into_view_if_needed()
            page.wait_for_timeout(1500)  # vega draws after the element appears
            c = chart.bounding_box()
            assert c and 100 < c["width"] <= width and c["height"] > 100, c
            assert _saturated_pixels(chart.screenshot()) > 200  # the blue cells
            page.screenshot(path=str(SHOTS / f"predictions_{width}.png"), full_page=False)
            assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
            assert not dialogs, dialogs
            assert not errors, errors
        finally:
            browser.close()
