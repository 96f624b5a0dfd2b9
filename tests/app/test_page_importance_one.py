"""AppTest of the Head importance page's per-example view: opened by a link's keys (the way
the Predictions page opens a row), its map, tiles, reading and flips are the library's numbers
for that one example (and so the CLI's); a label the classifier does not have, and a text over
the demo's cap, are one plain line."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.importance.evalset import load_classifier
from analysis.importance.one import encode_one, one_example_study, one_reading
from apptest_util import chart_frames
from importance_util import classifier_folder, stand_in_example
from ui.common.errors import plain
from ui.importance import state as S
from url_util import bound, open_page

REVIEW = "the food was great but the service was slow"


@pytest.fixture(autouse=True)
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("DASHBOARD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DASHBOARD_EXAMPLE_AUTOBUILD", "0")
    return tmp_path / "cache"


def _map(at):
    return next(f for f in chart_frames(at) if "change" in f.columns and "flips" in f.columns)


def test_a_link_opens_one_review_and_aspect_with_the_librarys_numbers(cache, monkeypatch):
    import ui.importance.compute as compute
    from analysis.core.models import checkpoint_stamp
    from analysis.importance import importance_study
    from analysis.importance.evalset import load_eval_set

    stand_in_example(cache)
    # a whole-set result of the same model and method computed on this server: the reading
    # compares the example with it
    loaded, card = load_classifier("example")
    whole = importance_study(loaded, load_eval_set(loaded, card, "sample"), method="mask",
                             n_boot=10)
    key = (S.PREFIX, "example", checkpoint_stamp("example"), "sample", "mask", "aspect_f1", 40)
    monkeypatch.setattr(compute, "_DONE", {key: whole})
    at = open_page("importance", monkeypatch, **{
        S.SCOPE: S.ONE, S.MODEL: S.EXAMPLE, S.TEXT: REVIEW, S.ASPECT: "service",
        S.LABEL: "negative", S.METHOD: S.METHODS["mask"]})
    assert not at.error, [e.value for e in at.error]
    got = bound(at)
    assert (got[S.SCOPE], got[S.TEXT], got[S.ASPECT], got[S.LABEL], got[S.METHOD]) == (
        S.ONE, REVIEW, "service", "negative", "mask")
    ref = one_example_study(loaded, encode_one(loaded, card, REVIEW, None, "negative",
                                               "service"), method="mask")
    heat = _map(at).sort_values(["layer", "head"])
    assert len(heat) == 8
    assert np.allclose(heat["change"], 100 * ref.heads["gold_probability"].ravel(), atol=1e-6)
    assert heat["flips"].tolist() == ref.heads["flips"].ravel().tolist()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Answer"] == plain(ref.classes[ref.predicted])
    assert metrics["Loss"] == f"{ref.loss:.3f}"
    assert metrics["Heads that flip it"] == f"{len(ref.flipped())} of 8"
    md = " ".join(m.value for m in at.markdown)
    lines = one_reading(ref, whole)
    assert lines[-2].startswith("Against the whole set")
    for line in lines:  # the page glosses its terms' first use ("Spearman (...)")
        assert plain(line.split("Spearman")[0]) in md
    assert "no interval" in md
    flips = " ".join(c.value for c in at.caption)
    assert (plain("No single head flips the answer.") in flips) == (not ref.flipped())
    table = next(d.value for d in at.dataframe if "answer then" in d.value.columns
                 and "head" in d.value.columns)
    top = table.iloc[0]
    l, h = int(top["layer"]) - 1, int(top["head"]) - 1
    harm = -ref.heads["gold_probability"]
    assert harm[l, h] == harm.max() or top["flips"]
    links = " ".join(table["open"])
    assert "a=the+food+was+great" in links and "b=service" in links  # NLI-M: the aspect word
    # another measure: the map follows, in the URL
    at.selectbox(key=S.MEASURE).set_value("loss")
    at.run()
    assert not at.exception and not at.error
    assert np.allclose(_map(at).sort_values(["layer", "head"])["change"],
                       ref.heads["loss"].ravel(), atol=1e-9)
    assert bound(at)[S.MEASURE] == "loss"


def test_a_text_pair_and_label_of_any_classifier(tmp_path, monkeypatch):
    folder = classifier_folder(tmp_path / "clf")
    at = open_page("importance", monkeypatch, src="Local folder", model=str(folder), **{
        S.SCOPE: S.ONE, S.MODEL: S.SIDEBAR, S.TEXT: "the soup was cold", S.PAIR: "was it good?",
        S.LABEL: "NEG"})
    assert not at.error, [e.value for e in at.error]
    loaded, card = load_classifier(str(folder))
    ref = one_example_study(loaded, encode_one(loaded, card, "the soup was cold",
                                               "was it good?", "neg"))
    assert bound(at)[S.LABEL] == "neg"
    assert np.allclose(_map(at).sort_values(["layer", "head"])["change"],
                       100 * ref.heads["gold_probability"].ravel(), atol=1e-6)
    # a label the classifier does not have: one line, no map
    bad = open_page("importance", monkeypatch, src="Local folder", model=str(folder), **{
        S.SCOPE: S.ONE, S.MODEL: S.SIDEBAR, S.TEXT: "the soup was cold", S.LABEL: "great"})
    errors = [e.value for e in bad.error]
    assert len(errors) == 1 and "\n" not in errors[0]
    assert plain("is not one of clf's labels (neg, neu, pos)") in errors[0]
    assert not [f for f in chart_frames(bad) if "flips" in f.columns]


def test_demo_mode_caps_the_texts_length(cache, monkeypatch, tmp_path):
    import ui.server.settings

    stand_in_example(cache)
    conf = tmp_path / "s.toml"
    conf.write_text("max_line_chars = 20\n")
    monkeypatch.setenv("DASHBOARD_MODE", "demo")
    monkeypatch.setenv("DASHBOARD_SETTINGS", str(conf))
    ui.server.settings.settings.cache_clear()
    try:
        at = open_page("importance", monkeypatch, **{
            S.SCOPE: S.ONE, S.TEXT: REVIEW, S.ASPECT: "food", S.LABEL: "positive"})
        errors = [e.value for e in at.error]
        assert errors == [plain(f"The text has {len(REVIEW)} characters; this server reads "
                                "at most 20.")]
    finally:
        ui.server.settings.settings.cache_clear()
