"""AppTest of the Report page: the empty-state guide, an example finding, editing, reordering,
removing, the glossary, and reopening a saved report (good, hostile and broken files)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from analysis.report import Finding, Report
from download_util import downloads

APP = str(Path(__file__).resolve().parents[2] / "app.py")
XSS = "<img src=x onerror=alert(1)>"


@pytest.fixture
def app(monkeypatch):

    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    at.switch_page("pages/report.py")
    at.run()
    assert not at.exception, at.exception
    return at


def _findings(at):
    return at.session_state["_report"].findings


def test_empty_report_guides_and_example_finding(app, default_model):
    at = app
    assert at.title[0].value == "Report"
    assert "No findings yet" in at.info[0].value and "Add to report" in at.info[0].value
    assert not downloads(at)
    at.button(key="report_example").click().run()
    assert not at.exception, at.exception
    (f,) = _findings(at)
    assert f.page == "Attention" and f.svg.count("<path") > 5
    assert f.source["model"] == default_model.name and len(f.source["weights sha256"]) == 64
    assert "Tokens" in f.numbers and "view=Model+view" in f.link
    labels = [b.label for b in downloads(at)]
    assert labels == ["Report (offline HTML)", "Markdown + PNG (.zip)",
                      "Report data (JSON, reopens here)"]
    # the glossary is on the page
    assert any("**vertical pattern**" in m.value for m in at.markdown)


def test_edit_reorder_remove(app):
    at = app
    at.session_state["_report"] = Report(findings=[Finding(title=f"F{k}", kind="view")
                                                   for k in range(3)])
    at.run()
    first, second = _findings(at)[0], _findings(at)[1]
    at.text_input(key=f"report_t_{id(first)}").input("Better title " + XSS).run()
    at.text_area(key=f"report_c_{id(first)}").input("My caption").run()
    assert (first.title, first.caption) == ("Better title " + XSS, "My caption")
    at.button(key=f"report_down_{id(first)}").click().run()
    assert [f.title for f in _findings(at)] == ["F1", "Better title " + XSS, "F2"]
    at.button(key=f"report_rm_{id(second)}").click().run()
    assert [f.title for f in _findings(at)] == ["Better title " + XSS, "F2"]
    assert not at.exception


def test_reopen_saved_report_and_refuse_bad_files(app):
    at = app
    rep = Report(title="Saved", findings=[Finding(title="From JSON " + XSS, kind="view",
                                                  link="javascript:alert(1)",
                                                  numbers={"cosine": "0.815"})])
    for data, message in ((b"{not json", "not a report saved by this dashboard (not JSON)"),
                          (json.dumps({"format": "x"}).encode(), "not a report saved"),
                          (json.dumps({**rep.to_json(), "findings": [{"svg": "<svg><"}]})
                           .encode(), "not a readable SVG")):
        at.file_uploader(key="report_upload").set_value(("r.json", data, "application/json"))
        at.run()
        at.button(key="report_open").click().run()
        assert not at.exception
        assert message in at.error[0].value.replace("\\", "")
        assert not _findings(at)  # the session's report is kept as it was
    at.file_uploader(key="report_upload").set_value(
        ("report.json", rep.json_text().encode(), "application/json"))
    at.run()
    at.button(key="report_open").click().run()
    assert not at.exception and not at.error
    (f,) = _findings(at)
    assert f.title == "From JSON " + XSS and f.link == "" and f.numbers == {"cosine": "0.815"}
    assert at.text_input(key=f"report_t_{id(f)}").value == "From JSON " + XSS
    assert at.session_state["_report"].title == "Saved"
    assert all(XSS not in m.value for m in at.markdown)  # shown only as plain text / in inputs


def test_demo_mode_caps_the_report_upload(monkeypatch):
    from ui.server.settings import settings

    monkeypatch.setenv("DASHBOARD_MODE", "demo")
    settings.cache_clear()
    try:

        at = AppTest.from_file(APP, default_timeout=240)
        at.run()
        at.switch_page("pages/report.py")
        at.run()
        rep = Report(findings=[Finding(title="x", kind="view", caption="y" * 3000)] * 50)
        big = json.dumps({**rep.to_json(), "pad": "z" * (3 * 2**20)}).encode()
        at.file_uploader(key="report_upload").set_value(("big.json", big, "application/json"))
        at.run()
        at.button(key="report_open").click().run()
        assert not at.exception
        assert "larger than 2 MB" in at.error[0].value
        assert not _findings(at)
    finally:
        monkeypatch.delenv("DASHBOARD_MODE")
        settings.cache_clear()
