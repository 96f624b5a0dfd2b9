"""The Attribution page in Debian Chromium at a phone's width (390 px) and a desktop's (1400 px),
opened by a deep link whose text is hostile (HTML, a template literal, quotes, backslashes,
backticks): the input coloured by every method shows that text as text, with a number on
hover, inside the screen; the map of a method is drawn on the canvas heatmap (a long input)."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest

from browser_util import SHOTS, _launch, _saturated_pixels, _wait_idle, playwright_session

HOSTILE = 'The <b>x</b> soup ${x} was "cold" \\ and `rude` <img src=x onerror=alert(1)> '


# the app on an empty cache (the default model): the tier's ``server`` (conftest.py)


@pytest.mark.parametrize("width", [390, 1400])
def test_colouring_and_map_with_hostile_text(server, width):
    from playwright.sync_api import expect

    SHOTS.mkdir(parents=True, exist_ok=True)
    dialogs, errors = [], []
    link = "/attribution?" + urlencode({"mode": "Sentence pair", "a": HOSTILE * 3,
                                        "b": "service", "attr_map": "alti"})
    with playwright_session() as p:
        browser = _launch(p)
        try:
            page = browser.new_page(viewport={"width": width, "height": 1400})
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(server + link)
            rows = page.locator(".attr-rows")  # the first run explains the input: wait for it
            expect(rows).to_have_count(1, timeout=300_000)
            _wait_idle(page, timeout=300_000)
            # on a busy machine value zeroing's estimate (n forwards of this 100-token input)
            # can pass 10 s: the page then holds it back and offers to run it, as a visitor
            # would be offered; run it, so every method is shown. The offer can come in a later
            # run than the first rows (the suite's full run once checked too early, saw no
            # button, and waited 300 s for a method never started): poll for either
            run_too = page.get_by_role("button", name=re.compile(r"^Run .* too"))
            texts = rows.locator(".attr-text")
            expect(texts.nth(4).or_(run_too.first)).to_be_visible(timeout=300_000)
            if run_too.count():
                assert page.get_by_text("would take about").count() == 1
                run_too.first.click()
                _wait_idle(page, timeout=300_000)
            try:
                expect(texts).to_have_count(5, timeout=300_000)  # the mixing methods (no head)
            except AssertionError as e:  # what the page said instead, kept for the next look
                page.screenshot(path=str(SHOTS / f"attribution_{width}_failed.png"),
                                full_page=True)
                said = page.locator("[data-testid='stMain']").inner_text()[:3000]
                raise AssertionError(f"{e}\n--- the page said:\n{said}") from None
            first = texts.first.locator(".attr-tok")
            tokens = first.all_text_contents()
            assert tokens[0] == "[CLS]" and "<" in tokens and "$" in tokens
            assert '"' in tokens and "\\" in tokens and "`" in tokens
            assert rows.locator("b, img").count() == 0 and page.locator("img[src='x']").count() == 0
            titles = first.evaluate_all("ts => ts.map(t => t.getAttribute('title'))")
            assert all(re.fullmatch(r".+: -?\d\.\d{4}", t, re.S) for t in titles)
            assert titles[tokens.index("<")].startswith("<: ")
            # darker for a higher score: the strongest non-special chip is the least transparent
            alphas = first.evaluate_all(
                "ts => ts.map(t => getComputedStyle(t).backgroundColor)")
            assert any(a.startswith("rgba(37, 99, 235") for a in alphas)
            box = rows.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= width + 1
            # the map: the component's canvas heatmap, drawn
            canvas = page.locator("canvas.av-hm-plot")
            expect(canvas).to_have_count(1, timeout=60_000)
            canvas.scroll_into_view_if_needed()
            assert _saturated_pixels(canvas.screenshot()) > 500
            page.screenshot(path=str(SHOTS / f"attribution_{width}.png"), full_page=False)
            assert not dialogs, dialogs
            assert not errors, errors
        finally:
            browser.close()
