"""Downloads in Debian Chromium (Playwright). On the real Report page, a caption edited, Tab,
and "Report (offline HTML)" clicked at once (the page is rerunning): with
``st.download_button`` the click held a file id the rerun dropped (the server logged
"Deferred file ... not found", the browser got no file); every such click now gets its file,
with the caption just typed. A small app: a file that cannot be made says why beside the
button, and a second click downloads it; a slow one says it has not arrived and still comes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from browser_util import CHROMIUM, ROOT, _launch, _wait_idle, streamlit_server, playwright_session

FLAKY_APP = r'''
import streamlit as st
import ui.common.exports.download as download_mod
from ui.common.exports.download import download_button
from ui.common.exports.export import ExportError

calls = st.session_state.setdefault("calls", [])  # a test app: its own session key


def make():
    calls.append(1)
    if len(calls) == 1:
        raise ExportError("The PNG could not be drawn (planted); the CSV holds the data.")
    return "a,b\n1,2\n"


download_button("CSV", make, "t.csv", "text/csv", "flaky")


def slow():
    import time
    time.sleep(4)
    return b"late but whole"


download_mod.WAIT_S = 1  # this app only: say "not arrived" after 1 s
download_button("Slow", slow, "slow.txt", "text/plain", "slow")
'''


def _report_with_a_finding(page, server):  # noqa: F811
    page.goto(server + "/report")
    _wait_idle(page, timeout=240_000)
    page.get_by_role("button", name="Add an example finding").click()
    _wait_idle(page, timeout=240_000)


def test_a_click_while_the_report_reruns_downloads_the_new_caption(server):  # noqa: F811
    with playwright_session() as p:
        browser = _launch(p)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1300},
                                    accept_downloads=True)
            _report_with_a_finding(page, server)
            for i in range(3):  # the old button lost nearly every such click
                caption = f"Caption number {i}: typed just before the click"
                box = page.get_by_label("Caption")
                box.fill(caption)
                box.press("Tab")  # the page reruns ...
                with page.expect_download(timeout=30_000) as dl:  # ... and the click comes now
                    page.get_by_role("button", name="Report (offline HTML)").click()
                assert dl.value.suggested_filename == "report.html"
                html = Path(dl.value.path()).read_text(encoding="utf-8")
                assert html.startswith("<!DOCTYPE html>") and caption in html
                _wait_idle(page)
            with page.expect_download(timeout=30_000) as dl:
                page.get_by_role("button", name="Report data (JSON, reopens here)").click()
            assert dl.value.suggested_filename == "report.json"
            data = json.loads(Path(dl.value.path()).read_bytes())
            assert [f["caption"] for f in data["findings"]] == [caption]
        finally:
            browser.close()


@pytest.fixture(scope="module")
def flaky_app(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Debian chromium is not installed ({CHROMIUM} is absent)")
    script = tmp_path_factory.mktemp("app") / "flaky_app.py"
    script.write_text(FLAKY_APP, encoding="utf-8")
    with streamlit_server(script, env={"PYTHONPATH": str(ROOT)}) as url:
        yield url


def test_a_failed_file_says_why_and_the_next_click_downloads(flaky_app):
    from playwright.sync_api import expect

    with playwright_session() as p:
        browser = _launch(p)
        try:
            page = browser.new_page(accept_downloads=True)
            page.goto(flaky_app)
            _wait_idle(page)
            button = page.get_by_role("button", name="CSV")
            button.click()
            status = page.get_by_test_id("dlStatus").first
            expect(status).to_have_text("The PNG could not be drawn (planted); the CSV holds "
                                        "the data. Click the button to try again.")
            with page.expect_download(timeout=30_000) as dl:
                button.click()
            assert dl.value.suggested_filename == "t.csv"
            assert Path(dl.value.path()).read_bytes() == b"a,b\n1,2\n"
            expect(status).to_have_text("")
        finally:
            browser.close()


def test_a_slow_file_says_it_has_not_arrived_and_still_comes(flaky_app):
    from playwright.sync_api import expect

    with playwright_session() as p:
        browser = _launch(p)
        try:
            page = browser.new_page(accept_downloads=True)
            page.goto(flaky_app)
            _wait_idle(page)
            status = page.get_by_test_id("dlStatus").nth(1)
            with page.expect_download(timeout=30_000) as dl:
                page.get_by_role("button", name="Slow").click()
                expect(status).to_have_text("The file has not arrived yet (the page may be "
                                            "busy). Click the button to try again.")
            assert Path(dl.value.path()).read_bytes() == b"late but whole"
            expect(status).to_have_text("")
        finally:
            browser.close()
