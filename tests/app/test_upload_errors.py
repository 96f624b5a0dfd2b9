"""An upload a library fails on is one line, never a traceback (issue 50: a pyarrow
``ArrowInvalid`` for a CSV cell '@SUM(1+1)' reached the server's log from a Search upload): the
corpus picker shows the file's name and the error's kind in one error box, the page stops
there, and in demo mode the library's own message (which may name server paths) is left out."""

from __future__ import annotations

import pyarrow as pa
import pytest

import ui.common.frame.corpus as corpus_mod
from ui.common.errors import unreadable
from ui.server.settings import settings as host_settings
from ui.search import state as S

from apptest_util import open_app_page

CSV = b"text,label\nThe soup was cold,@SUM(1+1)\nThe staff were kind,1\n"
SAID = "Could not convert '@SUM(1+1)' with type str: tried to convert to int64"


@pytest.fixture(autouse=True)
def _host(monkeypatch, tmp_path_factory):
    import ui.common.frame.models

    monkeypatch.delenv("DASHBOARD_SETTINGS", raising=False)
    monkeypatch.setenv("DASHBOARD_CACHE", str(tmp_path_factory.getbasetemp() / "upload-cache"))
    monkeypatch.setattr(ui.common.frame.models, "example_ready", lambda: False)

    def arrow_fails(*args, **kwargs):
        raise pa.lib.ArrowInvalid(SAID + "\nIn column 1: a second line")

    monkeypatch.setattr(corpus_mod, "read_corpus", arrow_fails)
    yield
    host_settings.cache_clear()


def test_a_library_error_on_an_upload_is_one_line_in_demo_mode(monkeypatch):
    monkeypatch.setenv("DASHBOARD_MODE", "demo")
    host_settings.cache_clear()
    at = open_app_page("search", **{S.CORPUS: "text", S.TEXT_CORPUS.source: "Upload"})
    at.file_uploader(key=S.TEXT_CORPUS.upload).set_value(("cells.csv", CSV, "text/csv")).run()
    assert not at.exception
    errs = [e.value for e in at.error]
    assert len(errs) == 1
    line = errs[0].replace("\\", "").replace("\u2060", "")  # plain()'s escapes
    assert "\n" not in line.strip()
    assert line.startswith("The file cells.csv could not be read (ArrowInvalid")
    assert SAID not in line  # a demo says the kind only: a library's words may name paths
    assert not at.get("html") or all("sm-list" not in h.proto.body for h in at.get("html"))


def test_outside_demo_mode_the_line_carries_the_librarys_first_line():
    exc = pa.lib.ArrowInvalid(SAID + "\nIn column 1: a second line")
    assert unreadable("The file cells.csv", exc) == (
        f"The file cells.csv could not be read (ArrowInvalid: {SAID}). Check its format, or "
        "try another file.")
    assert unreadable("The file cells.csv", exc, detail=False) == (
        "The file cells.csv could not be read (ArrowInvalid). Check its format, or try another "
        "file.")
