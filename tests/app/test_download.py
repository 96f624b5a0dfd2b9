"""The download button's server side (ui/common/exports/download.py): what a click's answer holds
(the file's bytes, or the reason there is none in words a visitor reads), and what an
ordinary run draws (no file made, none sent)."""

from __future__ import annotations

import base64

from download_util import downloads

from analysis.core.errors import InputError
from ui.common.exports.download import TEXTS, answer, file_bytes
from ui.common.exports.export import ExportError


def test_the_answer_carries_the_bytes_under_the_clicks_nonce():
    got = answer("n-1", lambda: "a,b\n1,é\n")
    assert got == {"nonce": "n-1", "b64": base64.b64encode("a,b\n1,é\n".encode()).decode()}
    assert base64.b64decode(answer("n-2", lambda: b"\x89PNG\x00")["b64"]) == b"\x89PNG\x00"
    assert file_bytes(bytearray(b"xy")) == b"xy"


def test_a_failure_is_said_in_words_never_nothing():
    def export_fails():
        raise ExportError("The PNG could not be drawn (ValueError); the CSV holds the data.")

    def input_fails():
        raise InputError("The report is empty.")

    def bug():
        raise KeyError("internal_name")

    assert answer("a", export_fails) == {
        "nonce": "a", "error": "The PNG could not be drawn (ValueError); the CSV holds the data."}
    assert answer("b", input_fails)["error"] == "The report is empty."
    # an unexpected error: its kind, never its internal message
    assert answer("c", bug) == {"nonce": "c", "error": "The file could not be made (KeyError)."}
    assert answer("d", lambda: 3) == {
        "nonce": "d", "error": "The file could not be made (TypeError)."}


def test_an_ordinary_run_makes_no_file_and_sends_none():
    from streamlit.testing.v1 import AppTest

    made = []

    def script():
        from ui.common.exports.download import download_button

        download_button("Report (offline HTML)", lambda: made.append(1) or "x",
                        "report.html", "text/html", "k", width="stretch", help="Tip")

    at = AppTest.from_function(script).run(timeout=30)
    assert not at.exception
    (b,) = downloads(at)
    assert (b.label, b.key, b.file_name, b.mime) == (
        "Report (offline HTML)", "k", "report.html", "text/html")
    assert b.data["answer"] is None and b.data["help"] == "Tip" and b.data["stretch"] is True
    assert b.data["texts"] == TEXTS and not made
