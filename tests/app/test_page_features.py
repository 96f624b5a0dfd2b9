"""AppTest of the Features page: it opens at once on the example's precomputed dictionary (no
model, no training: the example checkpoint is not even built here) with the result's quality
numbers, reading and feature dashboards; with the sidebar's model and the URL's settings a
press on "Train a dictionary" gives the library's own numbers; a hostile sidebar text reaches
the per-sentence view escaped."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from analysis.features import precomputed
from analysis.features.reading import reading
from ui.common.errors import plain
from ui.server.settings import settings as host_settings
from ui.features import state as S

from apptest_util import local_app, open_app_page


@pytest.fixture(autouse=True)
def _local(monkeypatch, tmp_path_factory):
    local_app(monkeypatch, tmp_path_factory.getbasetemp() / "features-cache")
    yield
    host_settings.cache_clear()


def open_page(**params) -> AppTest:
    return open_app_page("features", **params)


def reading_md(at) -> str:
    return next(m.value for m in at.markdown if "features rebuild" in m.value)


def test_opens_on_the_precomputed_example_without_a_model():
    pre = precomputed.load()
    assert pre is not None, "data/precomputed/features.json is missing or stale"
    at = open_page()
    assert not at.error
    assert any("Precomputed for the example checkpoint" in c.value for c in at.caption)
    assert reading_md(at) == "\n".join(f"- {plain(line)}" for line in reading(pre))
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Variance explained (held-out)"] == f"{100 * pre.quality['fve']:.1f}%"
    assert metrics["Classifier agreement"] == f"{100 * pre.quality['agreement']:.1f}%"
    # the browser opens on the most frequent feature's dashboard: its contexts, escaped
    top = max(pre.dashboards, key=lambda f: pre.features["freq"][f])
    html = "".join(h.proto.body for h in at.get("html"))
    peak = pre.dashboards[top]["contexts"][0]["activation"]
    assert "fx-list" in html and f"activation {peak:.3f}" in html


def test_training_on_the_sidebar_model_gives_the_librarys_numbers(default_model):
    from analysis.features.data import corpus_of
    from analysis.features.study import Inputs, Models, run
    from analysis.features.train import TrainSettings

    at = open_page(f_model="Sidebar model", f_data="treebank", f_compare="false", f_m="384",
                   f_k="16", f_epochs="10", f_layer="2",
                   a="<script>alert(1)</script> The food was great.")
    at.button(key=S.TRAIN).click().run()
    assert not at.exception, at.exception
    corpus = corpus_of("treebank", None, 0)
    ours = run(Inputs(corpus, 2, TrainSettings(m=384, k=16, epochs=10, seed=0),
                      effects=0), Models(default_model))
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Variance explained (held-out)"] == f"{100 * ours.quality['fve']:.1f}%"
    assert metrics["Last-layer cosine"] == f"{ours.quality['agreement']:.3f}"
    assert metrics["Dead features"] == f"{100 * ours.quality['dead']:.1f}%"
    # the per-sentence view: a hostile sidebar text is escaped, never markup
    html = "".join(h.proto.body for h in at.get("html"))
    # the tokenizer splits the tag into '<', 'script', '>': each piece escaped
    assert "<script>" not in html and ">&lt;</span>" in html and ">&gt;</span>" in html
