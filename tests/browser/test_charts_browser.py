"""Charts in Debian Chromium (Playwright): token text is data. Tokens made of the reserved words
of JavaScript and of the Vega expression language, quotes, backslashes, braces, a template
literal and HTML draw in every chart that shows tokens (the attention heatmap, the neuron
view's charts, the Drift page's before/after/difference maps) and read back literally from the
axes; the deep link of issue #13 (``a=the cat said if twice``) draws its heatmap; a large map's
PNG downloads from a two-column layout whose buttons keep their text."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlencode

import pytest

from browser_util import (CHROMIUM, ROOT, SHOTS, _launch, _pick, _saturated_pixels, _wait_idle,
                          playwright_session, streamlit_server, wait_drawn)

expect = pytest.importorskip("playwright.sync_api", reason="playwright is not installed: pip "
                             "install -r requirements-dev.txt to run the browser tests").expect

HOSTILE = ["[CLS]", "if", "datum", "event", "signal", "this", "NaN", "undefined", "true",
           "null", "function", "return", "else", "while", "var", "new", "typeof", "window",
           "item", "parent", "'", '"', "\\", "{", "}", "${x}", "<img src=x onerror=alert(1)>",
           "if", "[SEP]"]

APP = r'''
import types
import numpy as np
import streamlit as st
from analysis.attention.neuron import NeuronView
from ui.attention.blocks import neuron_section
from ui.common.charts import FIT_CSS, attention_heatmap, map_frame
from ui.drift.blocks import map_chart
from ui.common.exports.export import chart_downloads

st.html("<style>" + FIT_CSS + "</style>")  # as app.py: one copy of a side-by-side chart shows

TOKENS = {tokens!r}
SVG = {{"embedOptions": {{"renderer": "svg"}}}}  # text nodes the test can read back
n = len(TOKENS)
rng = np.random.default_rng(0)
before = rng.dirichlet(np.ones(n), n)
after = rng.dirichlet(np.ones(n), n)
part = st.query_params.get("part", "maps")
if part == "maps":
    st.altair_chart(attention_heatmap(map_frame(TOKENS, before), TOKENS, "heatmap")
                    .properties(usermeta=SVG), width="content")
    for title, m, kw in (("before", before, {{}}), ("after", after, {{}}),
                         ("after - before", after - before,
                          dict(scheme="redblue", domain=(-1.0, 1.0)))):
        st.altair_chart(map_chart(TOKENS, m, title, 260, **kw).properties(usermeta=SVG),
                        width="content")
elif part == "neuron":
    d = 8
    q, k = rng.normal(size=(n, d)), rng.normal(size=(n, d))
    scores = k @ q[3] / np.sqrt(d)
    soft = np.exp(scores - scores.max()); soft /= soft.sum()
    nv = NeuronView(TOKENS, 0, 0, 3, q[3], k, q[3] * k, scores, soft, soft, 0.0)
    enc = types.SimpleNamespace(tokens=TOKENS, n_tokens=n)
    import ui.attention.blocks as blocks  # the section draws through chart_cache.show
    real = blocks.show
    blocks.show = lambda c, **kw: real(c.properties(usermeta=SVG), **kw)
    neuron_section(nv, enc, 1, 1)
else:
    n = 512
    labels = [f"t{{i}}" for i in range(n)]
    m = rng.dirichlet(np.ones(n), n)
    with st.columns(2)[0]:
        chart = attention_heatmap(map_frame(labels, m), labels, "long map")
        chart_downloads(chart, "long_map", "dl", map_frame(labels, m))
'''


@pytest.fixture(scope="module")
def chart_app(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Debian chromium is not installed ({CHROMIUM} is absent)")
    script = tmp_path_factory.mktemp("app") / "charts_app.py"
    script.write_text(APP.format(tokens=HOSTILE), encoding="utf-8")
    with streamlit_server(script, env={"PYTHONPATH": str(ROOT)}) as url:
        yield url


@pytest.fixture
def browser():
    """The module's Chromium (conftest.py), each test ending as a fresh visitor."""
    with playwright_session() as p:
        b = _launch(p)
        try:
            yield b
        finally:
            b.close()


def _open(browser, url: str):
    page = browser.new_page(viewport={"width": 1500, "height": 1400}, accept_downloads=True)
    seen = {"dialogs": [], "errors": []}
    page.on("dialog", lambda d: (seen["dialogs"].append(d.message), d.dismiss()))
    page.on("pageerror", lambda e: seen["errors"].append(str(e)))
    page.on("console", lambda m: seen["errors"].append(m.text) if m.type == "error" else None)
    page.goto(url)
    _wait_idle(page)
    return page, seen


def _literal(shown: str, label: str) -> bool:
    """An axis label is the label itself, or its start cut with an ellipsis (labelLimit)."""
    return shown == label or (shown.endswith("…") and label.startswith(shown[:-1]))


def _chart_texts(chart) -> tuple[int, list[str]]:
    """(marks drawn, axis label texts) of a Vega chart rendered as SVG."""
    chart.locator("svg.marks").first.wait_for(timeout=60_000)
    marks = chart.locator("svg.marks path[role='graphics-symbol']").count()
    labels = chart.locator("g.role-axis-label text").all_text_contents()
    return marks, labels


def test_hostile_tokens_draw_and_read_back_literally(chart_app, browser):
    page, seen = _open(browser, chart_app + "/?part=maps")
    charts = page.get_by_test_id("stVegaLiteChart")
    expect(charts).to_have_count(4, timeout=60_000)  # heatmap, before, after, after - before
    expected = [f"{i + 1}: {t}" for i, t in enumerate(HOSTILE)]
    n = len(HOSTILE)
    for i in range(4):
        chart = charts.nth(i)
        chart.scroll_into_view_if_needed()
        marks, labels = _chart_texts(chart)
        assert marks >= n * n, (i, marks)
        assert len(labels) == 2 * n, (i, labels)
        for shown, label in zip(labels[:n] + labels[n:], expected + expected):
            assert _literal(shown, label), (i, shown, label)
        assert "2: if" in labels and "3: datum" in labels and "26: ${x}" in labels
        assert any(t.startswith("27: <img src=x") for t in labels)  # text, cut by labelLimit
    page.screenshot(path=str(SHOTS / "hostile_token_maps.png"), full_page=True)
    assert page.locator("img[src='x']").count() == 0
    assert not seen["dialogs"] and not seen["errors"], seen


def test_hostile_tokens_in_the_neuron_view_charts(chart_app, browser):
    page, seen = _open(browser, chart_app + "/?part=neuron")
    # dot products | softmax is drawn wide and stacked (charts.side_by_side): one copy shows
    charts = page.get_by_test_id("stVegaLiteChart").filter(visible=True)
    expect(charts).to_have_count(4, timeout=60_000)  # q, keys, products, dot products + softmax
    expected = [f"{i + 1}: {t}" for i, t in enumerate(HOSTILE)]
    marks, labels = _chart_texts(charts.nth(0))
    assert marks == 8 and labels[-1] == "4: event"  # the query's own row
    for i in (1, 2, 3):
        chart = charts.nth(i)
        chart.scroll_into_view_if_needed()
        marks, labels = _chart_texts(chart)
        assert marks >= len(HOSTILE), (i, marks)
        rows = [t for t in labels if ": " in t]
        assert len(rows) == len(HOSTILE) * (2 if i == 3 else 1), (i, labels)
        for shown, label in zip(rows, expected * 2):
            assert _literal(shown, label), (i, shown, label)
    assert page.locator("img[src='x']").count() == 0
    assert not seen["dialogs"] and not seen["errors"], seen


@pytest.fixture(scope="module")
def app_server(server):
    """The app itself: the tier's shared server (conftest.py)."""
    return server


def test_issue_link_in_the_app(app_server, browser):
    """/?a=the cat said if twice&view=Heatmap blanked the chart (console: Unrecognized signal
    name "if"); the neuron view of the same words draws too."""
    link = "/?" + urlencode({"mode": "One text", "a": "the cat said if twice",
                             "view": "Heatmap", "layer": 2, "head": 3})
    page, seen = _open(browser, app_server + link)
    chart = page.get_by_test_id("stVegaLiteChart").first
    chart.wait_for(timeout=60_000)
    chart.scroll_into_view_if_needed()
    wait_drawn(page)
    assert _saturated_pixels(chart.screenshot()) > 2000
    page.get_by_test_id("stButtonGroup").get_by_text(re.compile(r"^Neuron( view)?$")).click()
    _wait_idle(page)
    _pick(page, "Query token", "5: if")
    assert page.get_by_text("query 5 'if'", exact=False).count() == 1
    charts = page.get_by_test_id("stVegaLiteChart").filter(visible=True)  # one copy of each
    expect(charts).to_have_count(4, timeout=60_000)
    for i in range(4):
        charts.nth(i).scroll_into_view_if_needed()
        wait_drawn(page)
        shot = charts.nth(i).screenshot(path=str(SHOTS / f"issue_neuron_{i}.png"))
        assert _saturated_pixels(shot) > 200, i
    assert not [e for e in seen["errors"] if "signal" in e.lower()], seen
    assert not seen["dialogs"]


def test_large_map_png_downloads_from_a_narrow_column(chart_app, browser):
    page, seen = _open(browser, chart_app + "/?part=download")
    buttons = page.get_by_test_id("downloadButton")
    expect(buttons).to_have_count(3, timeout=60_000)
    for i, text in enumerate(("PNG", "SVG", "CSV")):
        button = buttons.nth(i).locator("button")
        assert button.inner_text().strip().endswith(text)
        label = button.get_by_text(text, exact=True)
        assert label.is_visible() and label.bounding_box()["width"] > 15  # text, not an icon
    note = page.get_by_text("This map has 262,144 cells", exact=False)
    assert note.is_visible()
    with page.expect_download(timeout=120_000) as dl:
        buttons.nth(0).locator("button").click()
    assert dl.value.suggested_filename == "long_map.png"
    data = Path(dl.value.path()).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 100_000
    buttons.nth(0).screenshot(path=str(SHOTS / "download_buttons.png"))
    assert not seen["errors"], seen
