"""The readings beside their numbers, in Debian Chromium (Playwright), one server for the module
on a tiny stand-in example checkpoint (NLI-M): each page's plain reading is read next to the
numbers it talks about (metrics, table cells), in the same unit and rounding, with its interval
or noise band; the Aspect heads page explains the shown checkpoint's own task and leaves out the
[SEP] baseline that scores 1.000 by construction (issue 35, "readings that disagree or
overclaim")."""

from __future__ import annotations

import re

import pytest

from browser_util import _launch, _wait_idle, playwright_session


@pytest.fixture(scope="module")
def server(example_server):
    """The tier's app server with the tiny stand-in example checkpoint (conftest.py)."""
    return example_server


@pytest.fixture
def browser(server):
    """The module's Chromium (conftest.py), each test ending as a fresh visitor."""
    with playwright_session() as p:
        b = _launch(p)
        try:
            yield b
        finally:
            b.close()


def _open(browser, url: str, timeout: int = 300_000):
    page = browser.new_page(viewport={"width": 1400, "height": 1600})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    _wait_idle(page, timeout=timeout)
    return page, errors


def _items(page) -> list[str]:
    """The text of every bullet of the page's Markdown (the readings are bullet lists)."""
    return [t for t in page.locator("[data-testid='stMarkdownContainer'] li").all_inner_texts()
            if t.strip()]


def _metrics(page) -> dict[str, str]:
    out = {}
    for m in page.get_by_test_id("stMetric").all():
        label, value = [x for x in m.inner_text().split("\n") if x.strip()][:2]
        out[label] = value
    return out


_CELLS = """el => Array.from(el.querySelectorAll('[role=columnheader], [role=gridcell]')).map(
    c => [c.getAttribute('role'), c.closest('[aria-rowindex]') ?
          c.closest('[aria-rowindex]').getAttribute('aria-rowindex') : '0',
          c.getAttribute('aria-colindex'), c.innerText])"""


# the column indices the grid has drawn cells for (it draws those in view, and a few beside)
COLUMNS_DRAWN = """el => Array.from(new Set(Array.from(el.querySelectorAll('[aria-colindex]'))
    .map(c => c.getAttribute('aria-colindex')))).sort().join(',')"""


def _table(frame) -> list[dict[str, str]]:
    """The rows of an st.dataframe as the grid exposes them to assistive technology (column
    header -> cell text; the values as they are, before the grid's formatting). The grid only
    exposes the columns in view, so it is scrolled sideways to its end."""
    frame.scroll_into_view_if_needed()
    heads: dict[str, str] = {}
    cells: dict[tuple[str, str], str] = {}
    columns = int(frame.evaluate("el => el.querySelector('table').getAttribute('aria-colcount')"))
    for step in range(12):
        for role, row, col, text in frame.evaluate(_CELLS):
            if role == "columnheader":
                heads[col] = text
            else:
                cells[(row, col)] = text
        if len(heads) >= columns:  # every column read
            break
        drawn = frame.evaluate(COLUMNS_DRAWN)
        moved = frame.evaluate("""el => { const s = el.querySelector('.dvn-scroller');
            if (!s || s.scrollLeft + s.clientWidth >= s.scrollWidth) return false;
            s.scrollLeft += s.clientWidth / 2; return true; }""")
        if not moved:
            break
        # the grid draws the columns scrolled into view (and drops those scrolled out)
        frame.page.wait_for_function(f"([el, before]) => ({COLUMNS_DRAWN})(el) !== before",
                                     arg=[frame.element_handle(), drawn], timeout=30_000)
    rows = sorted({r for r, _ in cells}, key=int)
    assert heads and rows, (heads, cells)
    return [{heads[c]: cells.get((r, c), "") for c in heads} for r in rows]


# the index of the first shown table (st.dataframe) one of whose column headers reads ``column``
# (-1: none yet); a shown table with no header cells yet is scrolled into view, since the grid
# fills its cells for assistive technology once it is drawn
TABLE_WITH = """(column) => {
  const frames = Array.from(document.querySelectorAll("[data-testid='stDataFrame']"));
  return frames.findIndex(f => {
    if (!f.offsetParent) return false;  // in a tab not shown
    const heads = f.querySelectorAll('[role=columnheader]');
    if (!heads.length) { f.scrollIntoView({block: 'nearest'}); return false; }
    return Array.from(heads).some(h => h.innerText.trim() === column);
  });
}"""


def _frame_with(page, column: str, timeout_ms: int = 120_000):
    """The shown table with the column ``column``, once there: a job's table may come a rerun
    after the page went idle."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(f"() => ({TABLE_WITH})({column!r}) >= 0", timeout=timeout_ms)
    except PlaywrightTimeout:
        seen = [f.locator("[role=columnheader]").all_inner_texts()
                for f in page.get_by_test_id("stDataFrame").all() if f.is_visible()]
        raise AssertionError(f"no table with the column {column!r}: {seen}") from None
    index = page.evaluate(f"({TABLE_WITH})({column!r})")
    frame = page.get_by_test_id("stDataFrame").nth(index)
    frame.scroll_into_view_if_needed()
    return frame


def test_head_importance_reading_names_its_metrics(server, browser):
    """'Heads free to go one at a time' and 'Removable together within 1 point' are the two
    counts the reading explains, with the same numbers; the reading says what this way of
    switching heads off removes against the other."""
    page, errors = _open(browser, server + "/importance")
    try:
        page.get_by_text("Reading", exact=True).wait_for(timeout=300_000)
        _wait_idle(page, timeout=300_000)
        metrics = _metrics(page)
        free = re.fullmatch(r"(\d+) of (\d+)", metrics["Heads free to go one at a time"])
        together = re.fullmatch(r"(\d+)% \((\d+) heads\)",
                                metrics["Removable together within 1 point"])
        assert free and together, metrics
        assert "Heads free to go" not in metrics and "Prunable within 1 point" not in metrics
        text = " ".join(_items(page))
        n, total = free.groups()
        assert f"One at a time, {n} of the {total} heads can go with no loss beyond noise " \
               "(the change's 95% interval reaches zero" in text
        pct, heads = together.groups()
        assert f"Removed together, in the order of the measured changes, {pct}% of the heads " \
               f"({heads} of {total}) can go before the model loses more than 1 point" in text
        assert "Here a head is switched off with its attention spread evenly: that keeps what " \
               "the head passes on" in text
        assert "zeroing the output asks whether the model needs the head at all" in text
        assert not errors, errors
    finally:
        page.close()


def test_aspect_heads_explain_the_task_leave_out_the_sep_baseline_and_read_the_causal_check(
        server, browser):
    """The stand-in example is an NLI-M checkpoint: 'What am I looking at?' quotes its
    auxiliary sentence, not QA-M's question. The [SEP] kind's fixed position scores 1.000 by
    construction: the verdict leaves it out and says so, and its table marks it. The causal
    check's reading says each metric's change, interval and noise band as its table has them."""
    page, errors = _open(browser, server + "/aspects")
    try:
        page.get_by_role("button", name="Run causal check").wait_for(timeout=300_000)
        page.get_by_text("What am I looking at?").first.click()
        told = page.get_by_test_id("stExpander").first.get_by_test_id(
            "stMarkdownContainer").filter(has_text="Each review is paired").first
        told.wait_for(state="visible", timeout=30_000)
        told = told.inner_text()
        # (the explanation itself: the glossary's entries follow it)
        assert "this checkpoint's task, NLI-M: for example \"service\"" in told
        assert "what do you think" not in told and "QA-M" not in told
        verdict = [t for t in _items(page) if "[SEP] when the aspect is absent" in t]
        assert verdict and "the fixed-position baseline is left out: it scores 1.000, the most " \
                           "any head can score, so no head could beat it" in verdict[0]
        assert "1.000 vs 1.000" not in " ".join(_items(page))
        page.get_by_role("tab", name="No-op").click()
        _wait_idle(page)
        rows = _table(_frame_with(page, "counted"))
        fixed = [r for r in rows if r["baseline"].startswith("fixed position")]
        assert fixed and float(fixed[0]["score"]) == 1.0
        assert fixed[0]["counted"] == "no: scores 1.000, no head can beat it"
        assert all(r["counted"] == "yes" for r in rows if r is not fixed[0])

        page.get_by_role("button", name="Run causal check").click()
        _wait_idle(page, timeout=300_000)
        rows = {r["metric"]: r for r in _table(_frame_with(page, "within noise"))}
        said = page.get_by_test_id("stAlert").filter(has_text="Switching off the").inner_text()
        for metric, words in (("aspect F1", "finding the aspects (F1)"),
                              ("4-way acc.", "the 4-way sentiment accuracy")):
            row = rows[metric]
            change = float(row["change (top)"])
            sentence = re.search(rf"For {re.escape(words)}, [^.]*(\.\d[^.]*)*\.", said).group(0)
            assert f"(95% interval {row['change (top) 95% interval']})" in sentence, sentence
            if row["within noise"] == "yes":
                assert f"the change is within noise: {change:+.1f} points" in sentence
                assert f"against {row['change (random) range']} points in 3 draws" in sentence
            else:
                assert "within noise" not in sentence
                assert f"{abs(change):.1f} points" in sentence
        assert "which is not what the ranking above measures" in said
        assert "The Head importance page switches off one head at a time" in said
        assert not errors, errors
    finally:
        page.close()


def test_attribution_faithfulness_reading_and_table_in_points(server, browser):
    """The reading's falls are the table's, in points (28.4, not 0.284), with the same 95%
    intervals."""
    page, errors = _open(browser, server + "/attribution")
    try:
        page.get_by_role("tab", name="Which explanation to trust").click()
        _wait_idle(page)
        page.get_by_role("button", name="Measure faithfulness").click()
        _wait_idle(page, timeout=300_000)
        rows = {r["method"]: r for r in _table(_frame_with(page, "comprehensiveness (points)"))}
        said = page.get_by_text("this model's predictions follow").inner_text()
        rand = rows["Random ranking"]
        value = float(rand["comprehensiveness (points)"])
        verb = "falls" if value >= 0 else "rises"
        assert f"a random choice of words: {verb} by {abs(value):.1f} points" in said, said
        if value >= 0:
            assert (f"95% interval {rand['comprehensiveness 95% interval (points)']} points)"
                    in said), said
        best = re.search(r"confidence in its answer (falls|rises) by ([\d.]+) points", said)
        assert best is not None, said
        comps = [float(r["comprehensiveness (points)"]) for m, r in rows.items()
                 if m != "Random ranking"]
        assert f"{max(comps):.1f}" == best.group(2) or best.group(1) == "rises"
        assert all(abs(float(r["comprehensiveness (points)"])) <= 100 for r in rows.values())
        assert not errors, errors
    finally:
        page.close()


def test_representations_probe_reading_beside_its_table(server, browser):
    """The probe reading's best layer, accuracy and interval are the table's; the same model
    as its own second model changes by nothing, which the reading calls within noise (and
    claims nothing about what the top layers now do)."""
    page, errors = _open(browser, server + "/representations?rep_tab=A+corpus&rep_corpus=absa"
                                           "&rep_n=20&rep_after=default", timeout=600_000)
    try:
        frame = _frame_with(page, "best layer 95% interval (%)")
        rows = _table(frame)
        assert len(rows) == 2, rows  # A and B, the aspect probe
        assert "majority baseline (%)" in rows[0], rows
        a = rows[0]
        text = " ".join(_items(page))
        layer = int(a["best layer"])
        where = "the embeddings (layer 0)" if layer == 0 else f"layer {layer}"
        low, high = a["best layer 95% interval (%)"].split(" to ")
        assert (f"best at {where}: {float(a['best layer accuracy (%)']):.1f}% of ") in text
        assert f"words right (95% interval {low}% to {high}%), against " \
               f"{float(a['majority baseline (%)']):.1f}% by always guessing" in text
        top = float(a["top layer accuracy (%)"])
        assert f"aspect probe goes from {top:.1f}% to {top:.1f}%, within noise (+0.0 points, " \
               "95% interval +0.0 to +0.0 points)" in text
        assert "group the review's words" not in text
        assert not errors, errors
    finally:
        page.close()
