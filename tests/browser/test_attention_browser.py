"""Chromium: the Attention page's component switches layers, heads, segments, the pinned token
and views in the browser (no server rerun per click), reports its state back to the widgets and
the URL once, restores it from a link, draws a 512 x 512 heatmap with readable labels, and fits
a phone screen. One server for the module (fixture from test_browser)."""

from __future__ import annotations

from urllib.parse import urlencode

from browser_util import (SHOTS, _launch, _query, _wait_idle, playwright_session, scroll_into_view,
                          selectbox)

# a 512-token pair (truncated): real review text with tokens that are words of JavaScript and
# of the Vega expression language, quotes, backslashes, braces and markup
LONG_A = ("The pasta was cooked perfectly and the sauce tasted fresh, but if the waiter forgot "
          "our drinks twice {datum} \"quoted\" 'single' back\\slash <b>bold</b> this new "
          "function return. ") * 12
LONG_B = "what do you think of the service of it ? " * 60

RERUNS = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  window.__reruns = 0;
  new MutationObserver(() => {
    if (app.getAttribute("data-test-script-state") === "running") window.__reruns++;
  }).observe(app, { attributes: true, attributeFilter: ["data-test-script-state"] });
}"""


def _open(p, url, width=1400):
    browser = _launch(p)
    page = browser.new_page(viewport={"width": width, "height": 1200}, accept_downloads=True)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    _wait_idle(page)
    return browser, page, errors


def test_layers_heads_and_views_switch_without_a_server_rerun(server):  # noqa: F811
    from playwright.sync_api import expect

    with playwright_session() as p:
        browser, page, errors = _open(p, server + "/attention?"
                                      + urlencode({"mode": "Sentence pair"}))
        try:
            view = page.locator(".av-head")
            expect(view).to_have_attribute("data-layer", "1", timeout=60_000)
            page.evaluate(RERUNS)
            lines_l1 = view.locator(".av-lines path").evaluate_all(
                "ps => ps.map(p => p.getAttribute('d')).join('|')")
            # a quick user: three layers, a head hidden, a segment filter, a pinned token;
            # each drawn at once (checked right after each click), no script run meanwhile
            seen = view.evaluate("""(root) => {
              const seen = [];
              const click = (sel) => root.querySelector(sel).dispatchEvent(
                new MouseEvent("click", { bubbles: true }));
              for (const l of ["2", "5", "4"]) {
                click(`.av-layers .av-btn[data-layer='${l}']`);
                seen.push([root.dataset.layer, root.querySelector(".av-title-main").textContent,
                           window.__reruns]);
              }
              click(".av-swatch[data-head='3']");
              click(".av-seg .av-btn[data-segment='A->B']");
              click(".av-col-from .av-tok:nth-of-type(3)");
              seen.push([root.dataset.heads, root.dataset.segment, window.__reruns]);
              return seen;
            }""")
            assert seen == [["2", "Layer 2", 0], ["5", "Layer 5", 0], ["4", "Layer 4", 0],
                            ["1,2,4,5,6,7,8,9,10,11,12", "A->B", 0]]
            assert page.evaluate("window.__reruns") == 0
            assert view.get_attribute("data-heads") == "1,2,4,5,6,7,8,9,10,11,12"
            assert view.get_attribute("data-segment") == "A->B"
            heads_drawn = set(view.locator(".av-lines path").evaluate_all(
                "ps => ps.map(p => p.dataset.head)"))
            assert "3" not in heads_drawn
            lines_l4 = view.locator(".av-lines path").evaluate_all(
                "ps => ps.map(p => p.getAttribute('d')).join('|')")
            assert lines_l4 != lines_l1
            # once the user pauses, ONE rerun carries the state to the widgets and the URL
            page.wait_for_function("window.__reruns >= 1", timeout=30_000)
            _wait_idle(page)
            assert page.evaluate("window.__reruns") == 1
            q = _query(page)
            assert (q["layer"], q["heads"], q["pin"], q["seg"]) == (
                "4", "1,2,4,5,6,7,8,9,10,11,12", "3", "A->B"), q
            expect(selectbox(page, "Layer").locator("input")).to_have_value("4")
            # ... and the component kept what the user sees
            assert view.get_attribute("data-layer") == "4"
            pinned = view.locator(".av-col-from .av-tok.av-pinned")
            expect(pinned).to_have_count(1)
            assert pinned.get_attribute("data-index") == "2"

            # the page's Layer widget still drives the view (server path)
            selectbox(page, "Layer").click()
            page.get_by_role("option", name="6", exact=True).click()
            _wait_idle(page)
            expect(view).to_have_attribute("data-layer", "6", timeout=30_000)
            assert view.get_attribute("data-segment") == "A->B"  # the filter is kept

            # the model view: a click opens that head in the head view without a rerun
            page.get_by_test_id("stButtonGroup").get_by_text("Model view", exact=True).click()
            _wait_idle(page)
            page.evaluate(RERUNS)
            page.locator(".av-model .av-cell[data-layer='3'][data-head='8']").click()
            view = page.locator(".av-head")
            assert view.get_attribute("data-layer") == "3"
            assert view.get_attribute("data-heads") == "8"
            assert page.evaluate("window.__reruns") == 0
            page.wait_for_function("window.__reruns >= 1", timeout=30_000)  # the URL follows
            _wait_idle(page)
            q = _query(page)
            assert (q["view"], q["layer"], q["head"], q["heads"]) == ("Head view", "3", "8", "8")
            timings = page.evaluate("window.__viewTimings")
            assert {t["kind"] for t in timings} >= {"layer-switch", "model-open", "mount-head"}
            assert not errors, errors
        finally:
            browser.close()


def test_a_link_restores_heads_pin_and_segment(server):  # noqa: F811
    from playwright.sync_api import expect

    link = "/attention?" + urlencode({"mode": "Sentence pair", "layer": 3, "heads": "2,5",
                                      "pin": "to:4", "seg": "B->A"})
    with playwright_session() as p:
        browser, page, errors = _open(p, server + link)
        try:
            view = page.locator(".av-head")
            expect(view).to_have_attribute("data-layer", "3", timeout=60_000)
            assert view.get_attribute("data-heads") == "2,5"
            assert view.get_attribute("data-segment") == "B->A"
            pinned = view.locator(".av-tok.av-pinned")
            expect(pinned).to_have_count(1)
            assert (pinned.get_attribute("data-side"),
                    pinned.get_attribute("data-index")) == ("to", "3")
            # every line ends at the pinned key and comes from a segment-B query
            ends = set(view.locator(".av-lines path").evaluate_all(
                "ps => ps.flatMap(p => p.getAttribute('d').split('M').slice(1)"
                ".map(s => s.split('L')[1]))"))
            assert len(ends) == 1
            assert {h for h in view.locator(".av-lines path").evaluate_all(
                "ps => ps.map(p => p.dataset.head)")} <= {"2", "5"}
            assert not errors, errors
        finally:
            browser.close()


def test_512_token_pair_head_view_and_heatmap(server, default_model):  # noqa: F811
    from playwright.sync_api import expect

    from analysis.core.encoding import encode

    labels = encode(default_model.tokenizer, LONG_A, LONG_B).tokens
    assert len(labels) == 512
    with playwright_session() as p:
        link = "/attention?" + urlencode({"mode": "Sentence pair", "a": LONG_A, "b": LONG_B})
        browser, page, errors = _open(p, server + link)
        try:
            view = page.locator(".av-head")
            expect(view).to_have_attribute("data-n", "512", timeout=120_000)
            page.evaluate(RERUNS)
            view.locator(".av-layers .av-btn[data-layer='5']").click()
            assert view.get_attribute("data-layer") == "5"
            assert page.evaluate("window.__reruns") == 0
            tokens = view.locator(".av-col-from .av-tok").evaluate_all(
                "gs => gs.map(g => g.dataset.token)")
            assert tokens == labels  # token text is data, shown literally

            page.get_by_test_id("stButtonGroup").get_by_text("Heatmap", exact=True).click()
            _wait_idle(page)
            hm = page.locator(".av-heatmap")
            expect(hm).to_have_attribute("data-n", "512", timeout=60_000)
            scroll_into_view(hm)
            for axis, edge, size in (("y", "top", "height"), ("x", "left", "width")):
                boxes = hm.locator(f".av-hm-{axis}lab").evaluate_all(
                    "ns => ns.map(n => { const r = n.getBoundingClientRect();"
                    " return {top: r.top, left: r.left, width: r.width, height: r.height}; })")
                assert 30 <= len(boxes) < 512  # thinned, yet many labels
                starts = sorted(b[edge] for b in boxes)
                ends = sorted(b[edge] + b[size] for b in boxes)
                assert all(e <= s + 0.5 for e, s in zip(ends, starts[1:])), axis  # no overlap
            shown = hm.locator(".av-hm-ylab").all_text_contents()
            idx = [int(i) for i in hm.locator(".av-hm-ylab").evaluate_all(
                "ns => ns.map(n => n.dataset.index)")]
            assert shown == [labels[i] for i in idx]
            hm.screenshot(path=str(SHOTS / "attention_heatmap_512.png"))
            # hover: the full tokens and the weight, as text
            over = hm.locator(".av-hm-over").bounding_box()
            page.mouse.move(over["x"] + over["width"] * 0.3, over["y"] + over["height"] * 0.6)
            i, j = (int(v) for v in hm.get_attribute("data-hover").split(","))
            tip = hm.locator(".av-hm-tip").inner_text()
            assert f"{i + 1}: {labels[i]}" in tip and f"{j + 1}: {labels[j]}" in tip
            assert hm.locator(".av-hm-tip *").evaluate_all(
                "ns => ns.every(n => ['DIV', 'B'].includes(n.tagName))")
            # brush a region: the view zooms into those rows and columns
            page.mouse.move(over["x"] + 20, over["y"] + 20)
            page.mouse.down()
            page.mouse.move(over["x"] + 120, over["y"] + 90, steps=4)
            page.mouse.up()
            r0, r1, c0, c1 = (int(v) for v in hm.get_attribute("data-zoom").split(","))
            assert 0 < r1 - r0 < 100 and 0 < c1 - c0 < 150
            assert int(hm.locator(".av-hm-ylabels").get_attribute("data-step")) == 1
            timings = page.evaluate("window.__viewTimings")
            assert any(t["kind"] == "heatmap-draw" and t["n"] == 512 for t in timings)
            assert not errors, errors
        finally:
            browser.close()


def test_controls_fit_a_phone_and_a_wide_screen(server):  # noqa: F811
    from playwright.sync_api import expect

    with playwright_session() as p:
        browser, page, errors = _open(p, server + "/attention?view=Model+view", width=390)
        try:
            expect(page.locator(".av-model")).to_have_count(1, timeout=60_000)
            group = page.get_by_test_id("stButtonGroup").first
            right = group.evaluate(
                "g => Math.max(...[...g.querySelectorAll('button')].map("
                "b => b.getBoundingClientRect().right))")
            assert right <= 390, right
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
            page.screenshot(path=str(SHOTS / "attention_phone.png"), full_page=False)
            page.set_viewport_size({"width": 1400, "height": 1000})
            page.wait_for_function("window.innerWidth === 1400")
            label = page.get_by_test_id("stCheckbox").filter(has_text="No specials").first
            expect(label).to_be_visible()
            cut = label.locator("p").evaluate("p => p.scrollWidth > p.clientWidth + 1")
            assert not cut
            # the Layer selector does nothing in the model view: it is disabled there
            assert selectbox(page, "Layer").locator("input").is_disabled()
            assert not errors, errors
        finally:
            browser.close()
