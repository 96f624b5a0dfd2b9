"""One real-browser test: the app in Debian Chromium (Playwright), the Attention page opened by a
deep link whose text is an XSS probe; layer and head switched with the page's widgets."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

# the helpers and servers are shared by the tier (browser_util.py, conftest.py); importing them
# from here keeps working
from browser_util import (CHROMIUM, IDLE, ROOT, SHOTS, URL_HAS, _launch, _pick,  # noqa: F401
                          _query, _saturated_pixels, _wait_idle, streamlit_server, wait_drawn)
from browser_util import playwright_session

XSS = "<img src=x onerror=alert(1)>"


def test_attention_page_in_chromium(server):
    from playwright.sync_api import expect

    SHOTS.mkdir(parents=True, exist_ok=True)
    dialogs, errors = [], []
    with playwright_session() as p:
        browser = _launch(p)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1300},
                                    accept_downloads=True)
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.on("pageerror", lambda e: errors.append(str(e)))
            link = "/?" + urlencode({"mode": "One text", "a": XSS,
                                              "view": "Head view", "layer": 1})
            page.goto(server + link)
            _wait_idle(page)
            view = page.locator(".av-head")  # Playwright's CSS pierces the open shadow root
            expect(view).to_have_attribute("data-layer", "1", timeout=60_000)

            # the probe is shown as text, token by token, in both columns, and never run
            tokens = view.locator(".av-col-from .av-tok-text").all_text_contents()
            assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"
            assert "<" in tokens and ">" in tokens and "=" in tokens
            joined = "".join(t[2:] if t.startswith("##") else t for t in tokens[1:-1])
            assert joined == XSS.replace(" ", "")
            assert view.locator(".av-col-to .av-tok-text").all_text_contents() == tokens
            assert view.locator("img").count() == 0
            assert page.locator("img[src='x']").count() == 0
            assert not dialogs, f"a dialog fired: {dialogs}"
            # the deep link resolved to a page (no Streamlit "Page not found" modal)
            assert page.get_by_text("Page not found").count() == 0

            # lines are drawn for all 12 heads; hovering a query token keeps only its lines
            all_heads = sorted({int(h) for h in view.locator(".av-lines path")
                                .evaluate_all("ps => ps.map(p => p.dataset.head)")})
            assert all_heads == list(range(1, 13))
            n_all = view.locator(".av-lines path").evaluate_all(
                "ps => ps.reduce((s, p) => s + p.getAttribute('d').split('M').length - 1, 0)")
            view.locator(".av-col-from .av-tok").nth(2).hover()
            n_one = view.locator(".av-lines path").evaluate_all(
                "ps => ps.reduce((s, p) => s + p.getAttribute('d').split('M').length - 1, 0)")
            assert 0 < n_one < n_all
            starts = set(view.locator(".av-lines path").evaluate_all(
                "ps => ps.flatMap(p => p.getAttribute('d').split('M').slice(1)"
                ".map(s => s.split('L')[0]))"))
            assert len(starts) == 1  # every line leaves the hovered token

            # double-clicking a head's swatch isolates it
            view.locator(".av-swatch[data-head='5']").dblclick()
            expect(view).to_have_attribute("data-heads", "5")
            page.mouse.move(5, 5)
            heads_drawn = set(view.locator(".av-lines path").evaluate_all(
                "ps => ps.map(p => p.dataset.head)"))
            assert heads_drawn == {"5"}
            _wait_idle(page)

            # switch the layer with the page's widget: the view redraws that layer
            _pick(page, "Layer", "3")
            expect(view).to_have_attribute("data-layer", "3", timeout=60_000)
            expect(view.locator(".av-title-main")).to_have_text("Layer 3")
            assert _query(page)["layer"] == "3"
            assert view.get_attribute("data-heads") == "5"  # the user's head choice is kept
            view.screenshot(path=str(SHOTS / "attention_head_view.png"))
            page.screenshot(path=str(SHOTS / "attention.png"), full_page=True)

            # downloads: the SVG keeps the probe as escaped text, the PNG is a PNG
            with page.expect_download() as dl:
                view.locator(".av-btn", has_text="SVG").click()
            assert dl.value.suggested_filename == "head_view_layer3.svg"
            svg = Path(dl.value.path()).read_text(encoding="utf-8")
            assert svg.startswith("<?xml") and "<svg" in svg
            assert ">&lt;</text>" in svg and "<img" not in svg
            assert 'data-head="5"' in svg and 'data-head="4"' not in svg
            with page.expect_download() as dl:
                view.locator(".av-btn", has_text="PNG").click()
            assert Path(dl.value.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

            # the model view: clicking layer 2, head 7 opens that head in the component's head
            # view at once; the page's widgets and the URL follow
            page.get_by_test_id("stButtonGroup").get_by_text("Model view", exact=True).click()
            _wait_idle(page)
            cell = page.locator(".av-model .av-cell[data-layer='2'][data-head='7']")
            expect(cell).to_be_visible(timeout=60_000)
            assert page.locator(".av-model .av-cell").count() == 6 * 12
            page.locator(".av-model").screenshot(path=str(SHOTS / "attention_model_view.png"))
            cell.click()
            view = page.locator(".av-head")
            assert view.get_attribute("data-layer") == "2"  # drawn before any server round trip
            assert view.get_attribute("data-heads") == "7"
            page.wait_for_function(URL_HAS, arg={"view": "Head view", "layer": "2", "head": "7"},
                                   timeout=30_000)  # the one rerun that carries it to the URL
            _wait_idle(page)
            q = _query(page)
            assert (q.get("view"), q.get("layer"), q.get("head"), q.get("heads")) == (
                "Head view", "2", "7", "7"), q
            page.get_by_test_id("stButtonGroup").get_by_text("Heatmap", exact=True).click()
            _wait_idle(page)

            # switch the head with the page's widget: the strongest links change with it
            links = page.get_by_text("Strongest links:", exact=False)
            expect(links).to_be_visible(timeout=60_000)
            before = links.inner_text()
            _pick(page, "Head", "4")
            assert _query(page)["head"] == "4"
            expect(links).not_to_have_text(before, timeout=60_000)

            # the neuron view: the one-row query-vector chart keeps a visible, coloured body
            page.get_by_test_id("stButtonGroup").get_by_text("Neuron view", exact=True).click()
            _wait_idle(page)
            expect(page.get_by_text("Neuron view, layer 2, head 4")).to_be_visible(timeout=60_000)
            q_chart = page.get_by_test_id("stVegaLiteChart").first
            q_chart.scroll_into_view_if_needed()
            wait_drawn(page)
            assert _saturated_pixels(q_chart.screenshot()) > 300
            assert not dialogs and page.locator("img[src='x']").count() == 0
            assert not errors, errors
        finally:
            browser.close()


def test_aspect_example_in_the_head_view(server, tiny_checkpoint):
    """Aspect heads page: a checkpoint loaded by folder, heads found, and the example of the top
    aspect head drawn in the real head view with the aspect word pinned and gold words marked."""
    from playwright.sync_api import expect

    ck = tiny_checkpoint
    errors = []
    with playwright_session() as p:
        browser = _launch(p)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1300})
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(server + "/aspects")
            _wait_idle(page)
            page.get_by_text("Load a checkpoint folder", exact=True).click()
            _wait_idle(page)
            box = page.get_by_role("textbox", name="Checkpoint folder", exact=True)
            box.fill(str(ck))
            box.press("Enter")
            _wait_idle(page)
            page.get_by_role("button", name="Load", exact=True).click()
            _wait_idle(page)
            page.get_by_role("button", name="Find aspect heads").click()
            _wait_idle(page, timeout=240_000)
            view = page.locator(".av-head")
            expect(view).to_have_count(1, timeout=60_000)
            view.scroll_into_view_if_needed()
            # one head shown, the aspect word pinned: every line leaves that one word
            assert len(view.get_attribute("data-heads").split(",")) == 1
            pinned = view.locator(".av-col-from .av-tok.av-pinned")
            expect(pinned).to_have_count(1)
            assert pinned.get_attribute("data-token") in ("price", "anecdotes", "food",
                                                          "ambience", "service")
            starts = set(view.locator(".av-lines path").evaluate_all(
                "ps => ps.flatMap(p => p.getAttribute('d').split('M').slice(1)"
                ".map(s => s.split('L')[0]))"))
            assert len(starts) == 1
            # gold words are marked in both columns and drawn green
            gold = view.locator(".av-col-to .av-tok.av-marked")
            assert gold.count() >= 1
            assert view.locator(".av-col-from .av-tok.av-marked").count() == gold.count()
            fill = gold.first.locator(".av-tok-text").evaluate("t => getComputedStyle(t).fill")
            assert fill == "rgb(26, 127, 55)"
            view.screenshot(path=str(SHOTS / "aspect_example_head_view.png"))
            assert not errors, errors
        finally:
            browser.close()


def test_links_to_the_pages_earlier_urls_open_the_renamed_pages(server):
    """/noop_stats and /aspect_heads (the pages' URLs before they took their study's name) open
    /noop and /aspects with the link's query parameters (after the server's first request,
    which Streamlit looks up by file name)."""

    with playwright_session() as p:
        browser = _launch(p)
        try:
            page = browser.new_page()
            page.goto(server + "/")
            _wait_idle(page)
            for old, new, title in (("/noop_stats", "/noop", "No-op statistics"),
                                    ("/aspect_heads", "/aspects", "Aspect heads")):
                page.goto(server + old + "?noop_max=7&noop_source=Paste")
                _wait_idle(page)
                page.wait_for_url(f"**{new}?*", timeout=60_000)
                _wait_idle(page)
                assert parse_qs(urlparse(page.url).query) == {"noop_max": ["7"],
                                                              "noop_source": ["Paste"]}
                assert page.locator("h1").first.inner_text() == title
                assert page.get_by_text("Page not found").count() == 0
        finally:
            browser.close()


def test_the_text_box_counter_sits_below_a_long_text_not_over_it(server):
    """The character counter of the sidebar's text box ("579/20000") showed over the last line
    of a long text (issue #14); it must sit below the box, readable."""

    text = " ".join(["The pasta was superb but the waiter ignored us."] * 12)
    with playwright_session() as p:
        browser = _launch(p)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(server + "/attention?" + urlencode({"a": text}))
            _wait_idle(page)
            box = page.get_by_test_id("stSidebar").get_by_test_id("stTextArea").first
            box.locator("textarea").click()
            page.keyboard.press("End")
            page.keyboard.type(" and")
            counter = box.get_by_test_id("InputInstructions")
            counter.wait_for(timeout=10_000)
            assert f"{len(text) + 4}/" in counter.inner_text()
            area = box.locator("textarea").bounding_box()
            under = counter.bounding_box()
            assert under["y"] >= area["y"] + area["height"] - 1, (area, under)
        finally:
            browser.close()


def test_the_default_page_opens_under_its_own_name(server):
    """Issue 49: /attention (the Attention page's name, which the navigation served at "/" while
    it was the first page) said "Page not found... Running the app's main page."; the first
    page opens under its own name (now /atlas), its query parameters kept, and /attention opens
    the Attention page, with no such notice."""
    with playwright_session() as p:
        browser = _launch(p)
        try:
            page = browser.new_page()
            page.goto(server + "/")
            _wait_idle(page)
            for link, paths, title in (("/atlas?atlas_tab=x", ("", "/"), "Head atlas"),
                                       ("/attention?layer=3", ("/attention",), "Attention")):
                page.goto(server + link)
                _wait_idle(page)
                page.wait_for_url(lambda url: urlparse(url).path in paths, timeout=60_000)
                _wait_idle(page)
                assert parse_qs(urlparse(page.url).query) == parse_qs(urlparse(link).query)
                assert page.locator("h1").first.inner_text() == title
                assert page.get_by_text("Page not found").count() == 0
                assert page.get_by_text("Running the app's main page").count() == 0
        finally:
            browser.close()
