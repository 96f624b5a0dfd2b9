"""The demo's per-study budget (issue 50): a Search upload whose index would take longer than
the host's max_job_seconds on two idle cores is refused before anything runs, in one line
saying the estimate and what fits (analysis.core.cost); nothing is queued or built."""

from __future__ import annotations

import re

import pytest

from analysis.core import cost
from ui.search import state as S
from ui.server.settings import settings as host_settings

from apptest_util import open_app_page

LINE = " ".join(["the soup was cold but the staff were kind"] * 60)[:2000]


@pytest.fixture(autouse=True)
def _demo(monkeypatch, tmp_path):
    import ui.common.frame.models

    path = tmp_path / "settings.toml"
    path.write_text("max_job_seconds = 1\n")
    monkeypatch.setenv("DASHBOARD_MODE", "demo")
    monkeypatch.setenv("DASHBOARD_SETTINGS", str(path))
    monkeypatch.setenv("DASHBOARD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(ui.common.frame.models, "example_ready", lambda: False)
    host_settings.cache_clear()
    yield
    host_settings.cache_clear()


def test_a_search_upload_past_the_budget_is_refused_up_front(monkeypatch):
    import ui.search.blocks

    ran = []
    monkeypatch.setattr(ui.search.blocks, "run_job", lambda *a, **k: ran.append(1))
    at = open_app_page("search", **{S.CORPUS: "text", S.TEXT_CORPUS.source: "Upload"})
    data = ("\n".join([LINE] * 40) + "\n").encode()
    at.file_uploader(key=S.TEXT_CORPUS.upload).set_value(("long.txt", data, "text/plain")).run()
    assert not at.exception and ran == []
    shape = cost.Shape(layers=6, heads=12, hidden=384, inner=1536)  # the embedded model
    fits = int(1 // cost.seconds("search", shape, [256]))
    errs = [e.value.replace("\\", "") for e in at.error]
    assert len(errs) == 1 and "\n" not in errs[0].strip()
    assert errs[0].startswith("Indexing this corpus would take ")
    assert "(40 sentences, 10,240 tokens); a job may take at most 1 second here. Use at most " \
           f"{fits} sentences of this length (256 tokens), or shorter ones." in errs[0]


def test_a_features_upload_past_the_budget_is_refused_up_front(monkeypatch):
    import ui.features.compute
    from ui.features import state as F

    ran = []
    monkeypatch.setattr(ui.features.compute, "run_job", lambda *a, **k: ran.append(1))
    at = open_app_page("features", **{F.MODEL: "Sidebar model", F.DATA: "corpus",
                                      F.COMPARE: "false", F.TEXT_CORPUS.source: "Upload"})
    data = ("\n".join([LINE] * 40) + "\n").encode()
    at.file_uploader(key=F.TEXT_CORPUS.upload).set_value(("long.txt", data, "text/plain")).run()
    at.button(key=F.TRAIN).click().run()
    assert not at.exception and ran == []
    errs = [e.value.replace("\\", "") for e in at.error]
    assert len(errs) == 1 and "\n" not in errs[0].strip()
    assert errs[0].startswith("Training this dictionary would take ")
    assert "(40 inputs, 10,240 tokens; " in errs[0]
    fits = re.search(r"a job may take at most 1 second here\. Use at most (\d+) inputs of this "
                     r"length, fewer features or epochs", errs[0])
    assert fits and 1 <= int(fits.group(1)) < 40
