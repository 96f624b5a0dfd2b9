"""AppTest of the Representations page: it opens on the sidebar's text (every layer's points,
the library's numbers) and on the bundled treebank sample (probes, curves: the library's
numbers), a second model side by side, refusals in one plain line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from ui.server.settings import settings as host_settings
from analysis.representations import corpus_representations, input_representations
from analysis.syntax.treebank import sample_treebank
from ui.common.errors import plain
from ui.common.frame.sidebar import EXAMPLE_A, EXAMPLE_B
from ui.representations import state as S

from apptest_util import chart_frames

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(autouse=True)
def _local(monkeypatch):
    import ui.common.frame.models
    import ui.common.frame.sidebar

    monkeypatch.delenv("DASHBOARD_MODE", raising=False)
    monkeypatch.delenv("DASHBOARD_SETTINGS", raising=False)
    monkeypatch.setenv("DASHBOARD_EXAMPLE_AUTOBUILD", "0")
    monkeypatch.setattr(ui.common.frame.models, "example_ready", lambda: False)
    host_settings.cache_clear()
    yield
    host_settings.cache_clear()


def open_page(**params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    for k, v in params.items():
        at.query_params[k] = v
    # straight to the page (the first page, the Head atlas, has no text box in the sidebar)
    at.switch_page("pages/representations.py")
    at.run()
    assert not at.exception, at.exception
    return at


def frames(at, column: str) -> list:
    return [f for f in chart_frames(at) if column in f.columns]


def points(at, k: int = 0):
    """The k-th scatter's positions (model, layer, item, x, y)."""
    return [f for f in chart_frames(at) if {"x", "y", "item"} <= set(f.columns)][k]


def lookups(at) -> list[list[dict]]:
    """Each scatter's tokens (token, context, group) at layer 0 of its first model."""
    out = []
    for f in chart_frames(at):
        if "context" in f.columns:
            first = f[(f["layer"] == 0) & (f["model"] == f["model"].iloc[0])]
            out.append(first.sort_values("item").to_dict("records"))
    return out


def test_first_visit_shows_the_input_and_the_sample(default_model):
    at = open_page(**{S.N_SENTENCES: "40"})
    assert [t.value for t in at.title] == ["Representations"]
    assert not [e.value for e in at.error]
    text_pair = (EXAMPLE_A, EXAMPLE_B) if at.session_state["mode"] != "One text" \
        else (EXAMPLE_A, None)
    want = input_representations(default_model, *text_pair)
    df = points(at)
    assert set(df["model"]) == {f"A: {default_model.name}"}
    for layer in (0, 6):
        got = df[df["layer"] == layer].sort_values("item")[["x", "y"]].to_numpy()
        np.testing.assert_allclose(got, want.points[layer], atol=1e-5)
    assert [r["token"] for r in lookups(at)[0]] == want.tokens
    assert lookups(at)[0][2]["context"].startswith("[CLS] The «pasta» was")
    # the corpus part: the bundled treebank through the job queue, the library's numbers
    ref = corpus_representations(default_model, sample_treebank(40), scatter=False)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Sentences"] == "40"
    probes = frames(at, "accuracy")[0]
    np.testing.assert_allclose(probes.sort_values("layer")["accuracy"],
                               100 * np.asarray(ref.model.probes["upos"].layers), atol=1e-10)
    upos = ref.model.probes["upos"]
    low, high = upos.ci(upos.best_layer())
    table = next(d.value for d in at.dataframe if "best layer" in d.value.columns)
    assert table["best layer"].tolist() == [upos.best_layer()]
    assert table["best layer 95% interval (%)"].tolist() == [f"{100 * low:.1f} to {100 * high:.1f}"]
    geo = frames(at, "measure")[0]
    aniso = geo[geo["measure"] == "anisotropy"].sort_values("layer")["value"]
    np.testing.assert_allclose(aniso, ref.model.anisotropy, atol=1e-12)
    reading = " ".join(m.value for m in at.markdown)
    assert "separates nouns from verbs best" in reading
    best = f"{100 * upos.layers[upos.best_layer()]:.1f}"
    assert plain(f"at layer {upos.best_layer()}: {best}% of {upos.n_words} words right (95% "
                 f"interval {100 * low:.1f}% to {100 * high:.1f}%)") in reading


def test_second_model_side_by_side_and_a_bad_one_in_one_line(tiny_model_dir):
    at = open_page(**{S.AFTER: "default", S.METHOD: "aligned", S.CORPUS: "absa",
                      S.N_SENTENCES: "20"})
    df = points(at)
    models = sorted(set(df["model"]))
    assert len(models) == 2 and models[0].startswith("A: ") and models[1].startswith("B: ")
    a, b = (df[df["model"] == m].sort_values(["layer", "item"]) for m in models)
    np.testing.assert_allclose(a[["x", "y"]].to_numpy(), b[["x", "y"]].to_numpy(), atol=1e-6)
    assert at.selectbox(key=S.METHOD).value == "aligned"
    assert {"aspect", "other"} <= {r["group"] for r in lookups(at)[1]}
    # Add to report pins the top layer's picture of both panels, and the corpus scatter's
    for key, title in ((S.ADD_INPUT, "Token vectors layer by layer"),
                       (S.ADD_SCATTER, "Words of a corpus layer by layer")):
        at.button(key=f"report-add-{key}").click().run()
        finding = at.session_state["_report"].findings[-1]
        assert finding.title == title and finding.svg.startswith("<svg")
        assert "(layer 6)" in finding.svg and finding.svg.count("B: ") >= 1
    at.text_input(key=S.AFTER).set_value(str(tiny_model_dir("bert"))).run()
    errs = [e.value for e in at.error]
    assert len(errs) == 1 and "different shapes" in errs[0] and "\n" not in errs[0]


def test_demo_mode_caps_the_input_and_the_corpus(tmp_path, monkeypatch):
    conf = tmp_path / "demo.toml"
    conf.write_text('max_examples = 12\nmax_tokens = 16\n[models]\n'
                    '"all-MiniLM-L6-v2 (embedded)" = "default"\n', encoding="utf-8")
    import ui.representations.blocks

    monkeypatch.setattr(ui.representations.blocks, "DEMO_POINTS", 20)
    monkeypatch.setenv("DASHBOARD_MODE", "demo")
    monkeypatch.setenv("DASHBOARD_SETTINGS", str(conf))
    host_settings.cache_clear()
    at = open_page()
    assert not [e.value for e in at.error]
    assert at.selectbox(key=S.AFTER_NAME).value == "all-MiniLM-L6-v2 (embedded)"
    assert not [t for t in at.text_input if t.key == S.AFTER]  # no box can name a path
    df = points(at)
    assert df[df["layer"] == 0]["item"].nunique() == 16 and df["model"].nunique() == 2
    assert at.number_input(key=S.N_SENTENCES).value == 12
    assert {m.label: m.value for m in at.metric}["Sentences"] == "12"
    assert len(lookups(at)[1]) == 20  # the corpus scatter's words: the demo's cap
    assert any("shows 20 of the" in c.value for c in at.caption)


def test_every_key_is_named_in_state():
    """No widget, session or URL key of the page is a string of its own outside state.py."""
    import re

    root = Path(__file__).resolve().parents[2]
    for path in ("pages/representations.py", "ui/representations/blocks.py",
                 "ui/representations/charts.py"):
        text = (root / path).read_text(encoding="utf-8")
        assert not re.search(r"""(key|bind)=f?["']|session_state\[["']|query_params\[["']""",
                             text), path
    assert len(set(S.URL_PARAMS)) == len(S.URL_PARAMS)


def test_uploads_a_treebank_without_upos_and_a_broken_file(default_model):
    at = open_page(**{S.CORPUS: "upload", S.N_SENTENCES: "10"})
    assert not [e.value for e in at.error]
    rows = "\n".join(f"{i}\t{w}\t_\t_\t_\t_\t{h}\t{r}\t_\t_" for i, (w, h, r) in enumerate(
        [("<b>x</b>", 2, "nsubj"), ("${x}", 0, "root"), ('"q"\\\\', 2, "obj")], 1))
    text = "\n\n".join([rows] * 3) + "\n\n"
    at.file_uploader(key=S.UPLOAD).set_value(("t.conllu", text.encode(), "text/plain")).run()
    assert not at.exception and not [e.value for e in at.error]
    assert {m.label: m.value for m in at.metric}["Sentences"] == "3"
    assert not frames(at, "accuracy")  # no UPOS: no probe, and the page says why
    assert any("no UPOS column" in c.value for c in at.caption)
    assert {r["token"] for r in lookups(at)[1]} == {"<b>x</b>", "${x}", '"q"\\\\'}
    at.file_uploader(key=S.UPLOAD).set_value(("bad.conllu", b"1\tx\n\n", "text/plain")).run()
    errs = [e.value for e in at.error]
    assert len(errs) == 1 and "missing column" in errs[0] and "\n" not in errs[0]


def test_the_corpus_stays_in_the_url_across_a_page_change():
    """Issue 35: another page and back (the browser opens both by their bare paths, so the URL
    loses every parameter on the way) keeps the corpus picked, in the box and in the URL that
    Copy link shares, as the widgets bound to the URL keep theirs."""
    at = open_page(**{S.CORPUS: "absa", S.N_SENTENCES: "8"})
    assert at.selectbox(key=S.CORPUS).value == "absa"
    at.switch_page("pages/report.py")
    at.query_params.clear()  # the Report page's bare path, as the browser opens it
    at.run()
    at.switch_page("pages/representations.py")
    at.query_params.clear()
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key=S.CORPUS).value == "absa"
    assert at.query_params[S.CORPUS] == "absa"
    assert {m.label: m.value for m in at.metric}["Sentences"] == "8"
