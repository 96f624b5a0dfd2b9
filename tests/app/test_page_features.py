"""AppTest of the Features page: it opens at once on the example's precomputed dictionary (no
model, no training: the example checkpoint is not even built here) with the result's quality
numbers, reading and feature dashboards; with the sidebar's model and the URL's settings a
press on "Train a dictionary" gives the library's own numbers; a hostile sidebar text reaches
the per-sentence view escaped."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from analysis.features import precomputed
from analysis.features.data import corpus_of
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


UPLOAD = "\n".join([
    "The soup was cold and the bread was stale.", "Our waiter was friendly and quick.",
    "The pasta tasted of nothing at all.", "We waited an hour for a table.",
    "The dessert was the best part of the meal.", "Prices are high for such small plates.",
    "The terrace has a lovely view of the river.", "Music was far too loud to talk.",
    "The chef came out to greet every table.", "I would not order the fish again.",
    "Service was slow but the staff apologised.", "The wine list is short and expensive.",
    "Fresh herbs lifted the simple salad.", "The room was cramped and noisy.",
    "Portions were generous and hot.", "The coffee arrived cold twice.",
    "A warm welcome and a calm dining room.", "The steak was cooked exactly as asked.",
    "Bread and olives came free with the drinks.", "We will certainly come back.",
]) + "\n"


def test_training_on_an_uploaded_file_names_it_and_says_it_has_no_annotations(default_model):
    from analysis.features.corpus import feature_corpus
    from analysis.features.study import Inputs, Models, run
    from analysis.features.train import TrainSettings
    from analysis.search.corpus import read_data, with_lines

    at = open_page(f_model="Sidebar model", f_data="corpus", f_compare="false", f_m="384",
                   f_k="8", f_epochs="10", f_layer="2", **{S.TEXT_CORPUS.source: "Upload"})
    assert any("A link cannot carry an uploaded file" in c.value for c in at.caption)
    at.file_uploader(key=S.TEXT_CORPUS.upload).set_value(
        ("reviews.txt", UPLOAD.encode(), "text/plain")).run()
    assert not at.exception and not at.error
    at.button(key=S.TRAIN).click().run()
    assert not at.exception and not at.error, (at.exception, at.error)
    # the library's own numbers on the file read as the CLI reads it
    data = with_lines(*read_data(UPLOAD.encode(), name="reviews.txt"))
    corpus = feature_corpus(data, "reviews", None, 0)
    assert corpus.label_names == ()  # a plain text corpus: no annotations of its own
    ours = run(Inputs(corpus, 2, TrainSettings(m=384, k=8, epochs=10, seed=0), effects=0,
                      annotate=(corpus_of("treebank", None, 0),)), Models(default_model))
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Variance explained (held-out)"] == f"{100 * ours.quality['fve']:.1f}%"
    assert metrics["Features per token (L0)"] == f"{ours.quality['l0']:.1f}"
    assert metrics["Dead features"] == f"{100 * ours.quality['dead']:.1f}%"
    held = ours.corpus["heldout_inputs"]
    assert any(c.value == plain(f"Trained on the uploaded file reviews.txt (20 examples): 20 "
                                f"inputs ({ours.corpus['tokens']:,} tokens), {held} held out "
                                "for the quality numbers.") for c in at.caption)
    assert any("This corpus has no annotations of its own" in c.value for c in at.caption)
    assert at.query_params[S.DATA] == "corpus"  # the URL keeps the choice
    assert at.query_params[S.TEXT_CORPUS.source] == "Upload"


def test_a_second_session_reads_the_dictionary_from_the_disk_cache(default_model, monkeypatch):
    """A new session (as after a server restart: nothing in memory) asking for the same
    weights, corpus and settings reads the dictionary the first one trained: the trainer is
    not called again and the numbers are the same."""
    from analysis.features import study

    trained = []
    trainer = study.train_sae

    def counted(*a, **kw):
        trained.append(1)
        return trainer(*a, **kw)

    monkeypatch.setattr(study, "train_sae", counted)
    params = dict(f_model="Sidebar model", f_data="corpus", f_compare="false", f_m="384",
                  f_k="8", f_epochs="10", f_layer="1", f_seed="7",
                  **{S.TEXT_CORPUS.source: "Paste"})
    shown = []
    for _ in range(2):
        at = open_page(**params)
        at.text_area(key=S.TEXT_CORPUS.paste).input(UPLOAD).run()
        at.button(key=S.TRAIN).click().run()
        assert not at.exception and not at.error, (at.exception, at.error)
        shown.append({m.label: m.value for m in at.metric})
        assert any(c.value.startswith("Trained on pasted lines (20 examples)")
                   for c in at.caption)
    assert len(trained) == 1 and shown[0] == shown[1]
    assert any("read from the disk cache" in c.value for c in at.caption)
