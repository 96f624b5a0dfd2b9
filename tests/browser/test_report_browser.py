"""Sharing in Debian Chromium (Playwright): a copied No-op link opened in a fresh browser shows
the same view and the same numbers; findings added from three pages export as one HTML file
that, opened with every network request refused, draws every chart and holds every number
and link."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

from browser_util import SHOTS, _launch, _wait_idle, playwright_session
from ui.common.exports.keep import STORAGE_KEY


def _nav(page, title: str) -> None:
    """Go to another page through the sidebar (the same session: the report is kept)."""
    page.get_by_test_id("stSidebarNav").get_by_text(title, exact=True).click()
    _wait_idle(page, timeout=240_000)


def _number(page, label: str, value: int) -> None:
    box = page.get_by_label(label, exact=True)
    box.fill(str(value))
    box.press("Enter")
    _wait_idle(page, timeout=240_000)


def _add(page, nth: int = 0) -> None:
    page.get_by_role("button", name="Add to report").nth(nth).click()
    _wait_idle(page, timeout=120_000)


def _metrics(page) -> dict:
    out = {}
    for m in page.get_by_test_id("stMetric").all():
        label = m.get_by_test_id("stMetricLabel").inner_text().strip()
        out[label] = m.get_by_test_id("stMetricValue").inner_text().strip()
    return out


def test_copied_link_opens_the_same_view_in_a_fresh_browser(server):  # noqa: F811
    from playwright.sync_api import expect

    with playwright_session() as p:
        browser = _launch(p)
        try:
            ctx = browser.new_context(viewport={"width": 1400, "height": 1300},
                                      permissions=["clipboard-read", "clipboard-write"])
            page = ctx.new_page()
            page.goto(server + "/noop?noop_max=12")
            _wait_idle(page, timeout=240_000)
            expect(page.get_by_test_id("stMetric").first).to_be_visible(timeout=120_000)
            page.get_by_text("Attention norms", exact=True).click()  # a toggle, off
            _wait_idle(page, timeout=240_000)
            page.get_by_role("tab", name="Entropy").click()
            _wait_idle(page)
            page.locator(".cl-button").click()
            field = page.locator(".cl-field")
            expect(field).to_be_visible()
            link = field.input_value()
            copied = page.evaluate("navigator.clipboard.readText()")
            assert copied == link
            query = {k: v[0] for k, v in parse_qs(urlparse(link).query).items()}
            assert urlparse(link).path == "/noop"
            assert query["noop_max"] == "12" and query["noop_norms"] == "false"
            assert query["noop_tab"] == "Entropy"
            numbers = _metrics(page)
            reading = page.get_by_test_id("stMarkdownContainer").filter(
                has_text="main attention sink").first.inner_text()
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / "share-noop-before.png"))

            fresh = browser.new_context(viewport={"width": 1400, "height": 1300})
            other = fresh.new_page()
            other.goto(link)
            _wait_idle(other, timeout=240_000)
            # every metric drawn and the script idle (a page may rerun once as it opens)
            expect(other.get_by_test_id("stMetric").filter(has_text="Tokens")).to_be_visible(
                timeout=120_000)
            _wait_idle(other, timeout=240_000)
            other.screenshot(path=str(SHOTS / "share-noop-after.png"))
            assert _metrics(other)["Tokens"] == numbers["Tokens"]
            assert _metrics(other)["Examples"] == numbers["Examples"] == "12"
            assert other.get_by_test_id("stMarkdownContainer").filter(
                has_text="main attention sink").first.inner_text() == reading
            assert other.get_by_role("tab", name="Entropy").get_attribute(
                "aria-selected") == "true"
            def toggle(label):
                return other.get_by_test_id("stCheckbox").filter(has_text=label).locator("input")

            assert toggle("Attention norms").is_checked() is False
            assert toggle("Gradient importance").is_disabled()
            assert toggle("Gradient importance").is_checked() is False
        finally:
            browser.close()


def test_report_from_three_pages_opens_offline(server, tmp_path):  # noqa: F811
    from playwright.sync_api import expect

    with playwright_session() as p:
        browser = _launch(p)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1300})
            page.goto(server + "/report")
            _wait_idle(page, timeout=240_000)
            expect(page.get_by_text("No findings yet", exact=False)).to_be_visible()

            # the sidebar's input box shows only where a page reads it, and keeps its text
            sidebar_box = page.get_by_test_id("stSidebar").get_by_role("textbox")
            expect(sidebar_box).to_have_count(1)
            sidebar_box.fill("My own sentence, kept.")
            sidebar_box.press("Control+Enter")
            _wait_idle(page)
            _nav(page, "No-op statistics")
            expect(sidebar_box).to_have_count(0)
            _number(page, "Examples (at most)", 12)
            expect(page.get_by_test_id("stMetric").first).to_be_visible(timeout=120_000)
            noop_tokens = _metrics(page)["Tokens"]
            _add(page, 0)  # the reading
            _add(page, 1)  # fig. 2

            _nav(page, "Syntax")
            expect(page.get_by_test_id("stMetric").first).to_be_visible(timeout=240_000)
            sentences = _metrics(page)["Sentences"]
            _add(page, 0)  # the reading
            _add(page, 1)  # the table of relations

            _nav(page, "Fine-tuning drift")
            _number(page, "Examples (at most)", 6)
            after = page.get_by_role("textbox", name="After: the fine-tuned checkpoint")
            after.fill("all-MiniLM-L6-v2 (embedded)")
            after.press("Enter")
            _wait_idle(page, timeout=240_000)
            expect(page.get_by_text("identical weights", exact=False)).to_be_visible(
                timeout=240_000)
            _add(page, 1)  # the cosine heatmap (0 is the reading)

            expect(sidebar_box).to_have_count(0)
            _nav(page, "Report")
            expect(sidebar_box).to_have_value("My own sentence, kept.")
            titles = page.get_by_label(re.compile(r"^Finding \d+: title$"))
            expect(titles).to_have_count(5, timeout=60_000)
            titles.nth(0).fill("Where the model rests")
            titles.nth(0).press("Enter")
            _wait_idle(page)
            # the page previews each chart (fig. 2 and the cosine heatmap) as an image
            expect(page.get_by_test_id("stImage").locator("img")).to_have_count(2)
            titles.nth(1).scroll_into_view_if_needed()
            page.screenshot(path=str(SHOTS / "report-page.png"))
            with page.expect_download() as dl:
                page.get_by_role("button", name="Report (offline HTML)").click()
            path = tmp_path / "report.html"
            dl.value.save_as(path)
        finally:
            browser.close()

        html = path.read_text(encoding="utf-8")
        browser = _launch(p)
        try:
            ctx = browser.new_context(viewport={"width": 1200, "height": 1000})
            asked = []

            def refuse(route):
                asked.append(route.request.url)
                if route.request.url.startswith("file:"):
                    route.continue_()
                else:
                    route.abort()

            ctx.route("**/*", refuse)
            offline = ctx.new_page()
            offline.goto(path.as_uri())
            sections = offline.locator("section.finding")
            expect(sections).to_have_count(5)
            assert all(u.startswith("file:") for u in asked), asked
            offline.screenshot(path=str(SHOTS / "report-offline.png"), full_page=True)
            # every chart is drawn: fig. 2 of No-op and the Drift cosine heatmap, with marks
            charts = offline.locator("section.finding figure svg")
            assert charts.count() == 2
            for k in range(2):
                box = charts.nth(k).bounding_box()
                assert box["width"] > 200 and box["height"] > 150
                assert charts.nth(k).locator("path, rect").count() > 20
            assert charts.nth(1).locator("path[fill], rect[fill]").count() >= 72  # 6 x 12 cells
            text = offline.locator("body").inner_text()
            # issue 49: links that open the dashboard from the file (relative ones, "./noop?...",
            # were dead there): without a public_url, the address this browser reached it at
            links = offline.locator("section.finding p.link a").evaluate_all(
                "as => as.map(a => a.href)")
        finally:
            browser.close()
    assert "Where the model rests" in html
    # every number, reading and link
    assert "Examples\n12" in text and noop_tokens in text and "main attention sink" in text
    assert sentences in text and "det" in text
    assert "Mean head cosine\t1.000" in text or "Mean head cosine\n1.000" in text
    assert len(links) == 5
    paths = [urlparse(u).path for u in links]
    assert paths == ["/noop", "/noop", "/syntax", "/syntax", "/drift"]
    assert {urlparse(u).netloc for u in links} == {urlparse(server).netloc}
    assert "./noop" not in html
    assert "noop_max=12" in links[0] and "drift_max=6" in links[4]
    assert "drift_after=all-MiniLM-L6-v2" in links[4]
    assert "weights sha256" in text and re.search(r"\b[0-9a-f]{64}\b", text)
    assert "transformers" in text and "torch" in text  # package versions


def test_pinned_findings_survive_a_reload_and_stay_in_this_browser(server):  # noqa: F811
    """Issue 35: a reload (a new session) finds the pinned findings again, kept in this
    browser's storage; another browser (another visitor) starts with none."""
    from playwright.sync_api import expect

    with playwright_session() as p:
        browser = _launch(p)
        try:
            ctx = browser.new_context(viewport={"width": 1400, "height": 1300})
            page = ctx.new_page()
            page.goto(server + "/report")
            _wait_idle(page, timeout=240_000)
            page.get_by_role("button", name="Add an example finding").click()
            _wait_idle(page, timeout=240_000)
            title = page.get_by_label("Finding 1: title", exact=True)
            expect(title).to_have_value("Where attention goes, layer by layer", timeout=60_000)
            title.fill("Kept across a reload")
            title.press("Tab")
            _wait_idle(page)
            page.reload()
            _wait_idle(page, timeout=240_000)
            title = page.get_by_label("Finding 1: title", exact=True)
            expect(title).to_have_value("Kept across a reload", timeout=60_000)
            assert page.get_by_text("No findings yet").count() == 0
            page.goto(server + "/noop?noop_max=12")  # another page, then a fresh load of Report
            _wait_idle(page, timeout=240_000)
            page.goto(server + "/report")
            _wait_idle(page, timeout=240_000)
            expect(page.get_by_label("Finding 1: title", exact=True)).to_have_value(
                "Kept across a reload", timeout=60_000)
            other = browser.new_context(viewport={"width": 1400, "height": 1300}).new_page()
            other.goto(server + "/report")
            _wait_idle(other, timeout=240_000)
            expect(other.get_by_text("No findings yet")).to_be_visible()
            # what the browser keeps is visitor input: checked like an uploaded report
            dialogs = []
            other.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            other.evaluate("k => localStorage.setItem(k, '<img src=x onerror=alert(1)>')",
                           STORAGE_KEY)
            other.reload()
            _wait_idle(other, timeout=240_000)
            expect(other.get_by_text("The report kept in this browser was not reopened",
                                     exact=False)).to_be_visible(timeout=60_000)
            expect(other.get_by_text("No findings yet")).to_be_visible()
            assert other.locator("img[src='x']").count() == 0 and not dialogs
            # the last finding removed: a reload finds none either
            page.get_by_role("button", name="Remove").first.click()
            _wait_idle(page)
            page.reload()
            _wait_idle(page, timeout=240_000)
            expect(page.get_by_text("No findings yet")).to_be_visible()
        finally:
            browser.close()
