"""AppTest (issue 35, "The first start blocks four pages"): while the example checkpoint's build
holds the queue's background lane for the whole test (a ticket of this test's thread, in the
training group, as the real build's), the pages that need no fine-tuned model run their work:
No-op statistics, Syntax and the Representations corpus part (and its one input's t-SNE, in the
short lane) finish a job of their own in the same queue (its rate is recorded: computed, not a
cached result) and the build still runs."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from analysis.core.execution.queue import BACKGROUND, TRAINING, JobQueue
from ui.common.jobs import kept

APP = str(Path(__file__).resolve().parents[2] / "app.py")
BUILD = "Building the example checkpoint"


@pytest.fixture
def queue(monkeypatch):
    import ui.common.jobs
    import ui.common.frame.models
    import ui.server.settings
    import ui.common.frame.sidebar

    monkeypatch.delenv("DASHBOARD_MODE", raising=False)
    monkeypatch.delenv("DASHBOARD_SETTINGS", raising=False)
    monkeypatch.setenv("DASHBOARD_EXAMPLE_AUTOBUILD", "0")
    monkeypatch.setattr(ui.common.frame.models, "example_ready", lambda: False)
    ui.server.settings.settings.cache_clear()
    # each test computes its page's work (not a result cached by a module that ran earlier in
    # this test process: the queue would then record no rate)
    st.cache_data.clear()
    kept.clear_all()  # the results kept outside Streamlit's caches (ui.common.jobs.kept)
    q = JobQueue(slots=1)
    build = q.join(BUILD, "example-build", lane=BACKGROUND, kind="Example checkpoint build",
                   exclusive=TRAINING)
    assert q.wait_turn(build) is None
    monkeypatch.setattr(ui.common.jobs, "job_queue", lambda: q)
    yield q
    q.leave(build)
    ui.server.settings.settings.cache_clear()


def _open(page: str, state: dict | None = None, **params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    for k, v in (state or {}).items():
        at.session_state[k] = v
    at.switch_page(page)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _still_building(q: JobQueue) -> None:
    assert q.state() == {"running": [BUILD], "waiting": 0}


def test_noop_statistics_run_beside_the_build(queue):
    at = _open("pages/noop.py", {"noop_max": 20})
    at.button_group(key="noop_source").set_value("Paste")
    at.run()
    at.text_area(key="noop_paste").input("The lanes test soup was cold.\nThe staff were kind.")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert {m.label: m.value for m in at.metric}["Examples"] == "2"
    assert queue.measured("No-op statistics") is not None
    _still_building(queue)


def test_syntax_heads_run_beside_the_build(queue):
    at = _open("pages/syntax.py")
    assert not [e.value for e in at.error]
    assert any("best head" in d.value.columns for d in at.dataframe)
    assert queue.measured("Syntax heads") is not None
    _still_building(queue)


def test_the_representations_corpus_part_runs_beside_the_build(queue):
    from ui.representations import state as S

    at = _open("pages/representations.py", **{S.N_SENTENCES: "12", S.METHOD: "tsne"})
    assert not [e.value for e in at.error]
    assert {m.label: m.value for m in at.metric}["Sentences"] == "12"
    assert queue.measured("Representations of a corpus (PCA per layer)") is not None
    # the one input's t-SNE of every layer went through the queue too, in the short lane
    assert queue.measured("Representations of one input (t-SNE)") is not None
    _still_building(queue)
