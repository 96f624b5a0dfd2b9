"""The Syntax page in Debian Chromium (Playwright): the dependency view of the bundled sample
draws one arc per gold relation shown, and a pasted treebank whose words are HTML, quotes and
braces shows them literally, in the dependency view and in the head view, and runs nothing."""

from __future__ import annotations

import numpy as np

from browser_util import SHOTS, _launch, _wait_idle, playwright_session, selectbox

ROW = "{i}\t{w}\t_\tX\t_\t_\t{h}\t{r}\t_\t_"
# HTML, quotes, braces, Markdown, LaTeX and an emoji code as words and relations
WORDS = ["The", "<b>x</b>", "saw", "{{ok}}", '"q"', "<img src=x onerror=alert(1)>", "$x^2$",
         "[a](http://x.y)", ":smile:"]
HEADS = [2, 3, 0, 3, 4, 3, 3, 3, 3]
RELS = ["det", "nsubj", "root", "obj", "amod", "dep", "dep", "dep", "*em*"]
PASTE = "\n".join(ROW.format(i=i, w=w, h=h, r=r)
                  for i, (w, h, r) in enumerate(zip(WORDS, HEADS, RELS), 1)) + "\n"


def _pick(page, label: str, option: str) -> None:
    """Choose ``option`` in the selectbox labelled ``label`` (again if a rerun that was still
    on its way closed the list)."""
    box = selectbox(page, label)
    for _ in range(5):
        _wait_idle(page)
        box.click()
        choice = page.get_by_role("option", name=option, exact=True)
        try:
            choice.click(timeout=5_000)
            break
        except Exception:  # noqa: BLE001 - the list closed under us: open it again
            page.keyboard.press("Escape")
    _wait_idle(page)


def test_dependency_view_in_chromium(server):  # noqa: F811
    from playwright.sync_api import expect

    SHOTS.mkdir(parents=True, exist_ok=True)
    dialogs, errors = [], []
    with playwright_session() as p:
        browser = _launch(p)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1400})
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(server + "/syntax")
            _wait_idle(page, timeout=240_000)
            view = page.locator("svg.dep-view").first
            expect(view).to_be_visible(timeout=120_000)
            # the sample's first det example, "The soup was cold, but the bread was fresh.":
            # two gold det arcs above, the best det head's two picks below
            words = view.locator("text.dep-word").all_text_contents()
            assert words == ["The", "soup", "was", "cold", ",", "but", "the", "bread", "was",
                             "fresh", "."]
            assert view.locator("g.dep-arc.gold").count() == 2
            assert sorted(view.locator("g.dep-arc.gold").evaluate_all(
                "gs => gs.map(g => g.dataset.head + '>' + g.dataset.dep)")) == ["2>1", "8>7"]
            assert view.locator("g.dep-arc.below").count() == 2
            expect(page.locator(".av-head")).to_have_count(1, timeout=60_000)
            page.get_by_test_id("stVegaLiteChart").first.wait_for(timeout=60_000)

            # a pasted treebank whose words are markup
            page.get_by_test_id("stButtonGroup").get_by_text("Paste", exact=True).click()
            _wait_idle(page)
            area = page.get_by_role("textbox", name="CoNLL-U text", exact=False)
            area.fill(PASTE)
            area.press("Control+Enter")
            _wait_idle(page, timeout=240_000)
            view = page.locator("svg.dep-view").first
            expect(view.locator("text.dep-word").first).to_have_text("The", timeout=60_000)
            assert view.locator("text.dep-word").all_text_contents() == WORDS
            assert view.locator("g.dep-arc.gold").count() == 1  # det: The <- <b>x</b>
            for rel, n_arcs in (("nsubj", 1), ("*em*", 1), ("all", len(WORDS))):
                _pick(page, "Relation", rel)
                view = page.locator("svg.dep-view").first
                expect(view.locator("g.dep-arc.gold")).to_have_count(n_arcs, timeout=60_000)
                assert view.locator("text.dep-word").all_text_contents() == WORDS
            labels = view.locator("g.dep-arc.gold > text").all_text_contents()
            assert sorted(labels) == sorted(RELS)
            # nothing of the words became markup, nothing ran
            for tag in ("b", "a", "img", "em", ".katex"):
                assert view.locator(tag).count() == 0, tag
            assert page.locator("img[src='x']").count() == 0
            head_view = page.locator(".av-head")
            expect(head_view).to_have_count(1, timeout=60_000)
            tokens = head_view.locator(".av-col-from .av-tok").evaluate_all(
                "ts => ts.map(t => t.dataset.token)")  # the full label (long ones show cut)
            assert tokens == ["[CLS]", *WORDS, "[SEP]"]
            assert head_view.locator("b, img, a").count() == 0
            view.scroll_into_view_if_needed()
            view.screenshot(path=str(SHOTS / "syntax_dependency_view.png"))
            page.screenshot(path=str(SHOTS / "syntax.png"), full_page=True)
            assert not dialogs, dialogs
            assert not errors, errors
        finally:
            browser.close()


def test_dependency_svg_is_escaped_text_on_one_line():
    """Without a browser: the SVG string the page draws (ui.syntax.views.dependency_svg)."""
    from ui.syntax.views import attention_arcs, dependency_svg, gold_arcs

    words = WORDS[:5] + ["two\nlines"]
    gold = gold_arcs(HEADS[:6], RELS[:6], "all")
    W = np.zeros((8, 8))
    W[1:7, 1:7] = np.eye(6)[[1, 2, 2, 2, 3, 2]]  # each word looks at its gold head...
    W[2, 3], W[2, 4] = 0.0, 1.0                   # ...but "<b>x</b>" looks at "{{ok}}"
    below = attention_arcs(W, HEADS[:6], RELS[:6], "all", "dep_to_head")
    svg = dependency_svg(words, gold, below)
    assert svg.count('class="dep-arc gold"') == 6 and 'data-head="0" data-dep="3"' in svg
    assert svg.count('class="dep-arc below ok"') == 4
    assert svg.count('class="dep-arc below wrong"') == 1 and 'data-from="2" data-to="4"' in svg
    assert "&lt;b&gt;x&lt;/b&gt;" in svg and "<b>" not in svg and "&quot;q&quot;" in svg
    assert ">two lines</text>" in svg and "\n" not in svg


# Whatever lies beyond the screen's edge must be inside a box made to scroll sideways (a chart,
# the dependency view, a table) that itself fits the screen; controls never do.
FITS_JS = """() => {
  const W = document.documentElement.clientWidth;
  const scrollers = '.dep-scroll, [data-testid="stVegaLiteChart"], [data-testid="stDataFrame"]';
  const bad = [];
  let seen = 0;
  for (const el of document.querySelectorAll('[data-testid="stMain"] *')) {
    const r = el.getBoundingClientRect();
    if (!r.width || !r.height) continue;
    seen += 1;
    if (r.right <= W + 1 && r.left >= -1) continue;
    let box = el.parentElement;  // the nearest box that scrolls sideways
    while (box && !['auto', 'scroll'].includes(getComputedStyle(box).overflowX)) {
      box = box.parentElement;
    }
    if (box && box.closest(scrollers) && box.getBoundingClientRect().right <= W + 1) continue;
    bad.push(`${el.tagName} ${el.dataset.testid || ''} right=${Math.round(r.right)} `
             + `"${(el.innerText || '').slice(0, 40)}"`);
  }
  return {W, page: document.documentElement.scrollWidth, seen, bad: bad.slice(0, 12)};
}"""


def _fits_settled(page, timeout: int = 15_000) -> dict:
    """:data:`FITS_JS` once the layout fits, or after ``timeout`` ms as it is then (the caller's
    asserts say what sticks out): CI once measured the Aspect heads page mid-layout, one chart's
    toolbar at x = -44..68 (after the page settles every toolbar sits at x = 262..374), so a
    single look can catch a frame the visitor never sees still."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(f"() => {{ const r = ({FITS_JS})(); "
                               "return r.page <= r.W && r.bad.length === 0; }",
                               polling=250, timeout=timeout)
    except PlaywrightTimeout:
        pass
    return page.evaluate(FITS_JS)


def test_four_pages_fit_a_390px_phone_screen(server):  # noqa: F811
    """At 390 px wide the source buttons wrap (the last one is not cut) and no element of the
    No-op, Drift, Aspect heads and Syntax pages sticks out of the screen (charts wider than the
    screen scroll inside their own box)."""
    from playwright.sync_api import expect

    SHOTS.mkdir(parents=True, exist_ok=True)
    with playwright_session() as p:
        browser = _launch(p)
        try:
            page = browser.new_page(viewport={"width": 390, "height": 900})
            for path, source in (("noop", "Hugging Face dataset"),
                                 ("drift", "Hugging Face dataset"), ("aspects", None),
                                 ("syntax", "Hugging Face dataset")):
                page.goto(f"{server}/{path}")
                _wait_idle(page, timeout=240_000)
                page.get_by_role("heading", level=1).first.wait_for(timeout=60_000)
                if path == "syntax":  # the heads grid (612 px wide) and the dependency view
                    expect(page.locator("svg.dep-view").first).to_be_visible(timeout=120_000)
                    page.get_by_test_id("stVegaLiteChart").first.wait_for(timeout=60_000)
                if path == "noop":  # the first chart, then the heatmap panels
                    page.get_by_test_id("stVegaLiteChart").first.wait_for(timeout=240_000)
                if source:
                    last = page.get_by_test_id("stButtonGroup").first.get_by_text(
                        source, exact=True)
                    box = last.bounding_box()
                    assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390, (path, box)
                checks = [_fits_settled(page)]
                if path == "noop":
                    page.get_by_role("tab", name="Heatmaps").click()
                    _wait_idle(page)
                    # the stacked copy of each side-by-side grid is the one a phone shows
                    page.get_by_test_id("stVegaLiteChart").filter(visible=True).nth(1).wait_for(
                        timeout=60_000)
                    checks.append(_fits_settled(page))
                for res in checks:
                    assert res["W"] == 390 and res["page"] <= 390, (path, res)
                    assert res["seen"] > 50 and not res["bad"], (path, res)
                page.screenshot(path=str(SHOTS / f"narrow_390_{path}.png"))
        finally:
            browser.close()


def test_a_link_to_the_first_relation_keeps_it(server):  # noqa: F811
    """The page opens on "det", not on the list's first relation ("all"): picking "all" must
    put it in the URL, and that link must open on "all" (Streamlit's own binding left the first
    option out, so the link opened on "det")."""
    from playwright.sync_api import expect

    with playwright_session() as p:
        browser = _launch(p)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1200})
            page.goto(server + "/syntax")
            _wait_idle(page, timeout=240_000)
            box = selectbox(page, "Relation")
            expect(box.get_by_role("combobox")).to_have_value("det", timeout=120_000)
            _pick(page, "Relation", "all")
            expect(box.get_by_role("combobox")).to_have_value("all", timeout=60_000)
            page.wait_for_function("() => location.search.includes('syntax_rel=all')",
                                   timeout=30_000)
            fresh = browser.new_page(viewport={"width": 1400, "height": 1200})
            fresh.goto(page.url)
            _wait_idle(fresh, timeout=240_000)
            expect(selectbox(fresh, "Relation").get_by_role("combobox")).to_have_value(
                "all", timeout=120_000)
        finally:
            browser.close()
