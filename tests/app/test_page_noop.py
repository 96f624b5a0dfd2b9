"""AppTest of the No-op statistics page on the bundled sample corpus (capped small)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from analysis.core.corpus import sample_corpus
from analysis.noop import corpus_stats
from download_util import downloads

CAP = 20
APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture
def app(monkeypatch):
    # ui.common.frame.sidebar.leave_legacy_navigation() calls st.rerun() on every AppTest run
    # (AppTest resets PagesManager.uses_pages_directory each run), and that rerun drops the page
    # chosen with switch_page; a real server only does it once. tests/conftest.py keeps it out of
    # the test.
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    at.session_state["noop_max"] = CAP
    at.switch_page("pages/noop.py")
    at.run()
    assert not at.exception, at.exception
    return at


def specs(at):
    """The page's chart specs (a comparison's phone copy left out: apptest_util)."""
    from apptest_util import wide_charts

    return [json.loads(c.proto.spec) for c in wide_charts(at)]


def chart_data(at, title_part: str):
    """The data frame behind the chart whose title contains ``title_part``."""
    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    for c in at.get("vega_lite_chart"):
        if title_part in json.dumps(json.loads(c.proto.spec).get("title")):
            raws = [d.data.data for d in c.proto.datasets] or [c.proto.data.data]
            frames = [convert_arrow_bytes_to_pandas_df(r) for r in raws]
            return max(frames, key=len)  # layered charts: the per-head data, not the rules
    raise AssertionError(f"no chart titled {title_part!r}")


def test_page_on_sample_corpus(app, default_model):
    at = app
    assert [t.value for t in at.title] == ["No-op statistics"]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Examples"] == str(CAP)
    assert at.number_input(key="noop_max").value == CAP
    ref = corpus_stats(default_model, sample_corpus(max_examples=CAP), norms=True)
    assert metrics["Tokens"] == f"{ref.n_tokens:,}"

    # the reading is computed from the numbers
    text = at.markdown[0].value
    assert "the main attention sink is [CLS], not [SEP]" in text
    pct_cls = round(100 * ref.metrics["cls"].mean())
    assert f"{pct_cls}% of attention goes to [CLS]" in text
    assert f"against {ref.uniform_entropy:.2f} for uniform attention" in text

    # charts: fig. 2, three heatmap grids, entropy, weight vs norm
    charts = specs(at)
    assert len(charts) == 6
    titles = json.dumps([c.get("title") for c in charts])
    for t in ("per layer (points: heads)", "Share of attention per head", "Entropy per head",
              "Norm share per head", "uniform attention", "Weight vs norm"):
        assert t in titles
    fig2 = chart_data(at, "points: heads")
    assert len(fig2) == 3 * 6 * 12
    sep_l1h1 = fig2[(fig2["statistic"] == "sep") & (fig2["layer"] == 1) & (fig2["head"] == 1)]
    assert sep_l1h1["value"].tolist() == [pytest.approx(ref.metrics["sep"][0, 0], abs=1e-6)]
    norm = chart_data(at, "Weight vs norm")
    assert len(norm) == 72
    assert norm["norm_share"].mean() == pytest.approx(
        (ref.metrics["norm_cls"] + ref.metrics["norm_sep"]).mean(), abs=1e-6)

    # tables: top no-op heads (with links to the Attention page) and positional heads
    layers, noop, pos = (d.value for d in at.dataframe[:3])
    # the per-layer table under the reading: its numbers in percent, with intervals (issue 35)
    assert list(layers["layer"]) == list(range(1, ref.n_layers + 1))
    assert layers["[CLS]+[SEP] %"].tolist() == pytest.approx(
        [round(100 * x, 1) for x in ref.per_layer("special")], abs=0.051)
    assert layers["[CLS]+[SEP] 95%"].str.contains(" to ").all()
    assert noop.shape[0] == 10
    w = ref.metrics["cls"] + ref.metrics["sep"]
    l, h = np.unravel_index(np.argmax(w), w.shape)
    assert (noop.iloc[0]["layer"], noop.iloc[0]["head"]) == (l + 1, h + 1)
    assert noop.iloc[0]["to [CLS]+[SEP]"] == pytest.approx(w[l, h], abs=1e-6)
    assert f"layer={l + 1}" in noop.iloc[0]["open"] and f"head={h + 1}" in noop.iloc[0]["open"]
    assert "kitchen" in noop.iloc[0]["open"]  # the corpus's first example
    assert {"layer", "head", "direction", "share"} <= set(pos.columns)
    assert (pos["share"] > 0.5).all() and pos.iloc[0]["direction"] == "previous"

    # issue 49: "which heads attend most to [SEP]" is answered by the table itself (it ranked
    # by [CLS]+[SEP] only, the top [SEP] heads were in the CSV alone), and each map of shares
    # has its own colour scale up to its largest value (the [SEP] map's 15% looked blank on
    # one 0-1 scale)
    at.radio(key="noop_rank").set_value("sep").run()
    noop = at.dataframe[1].value
    sep = ref.metrics["sep"]
    order = np.argsort(-sep, axis=None, kind="stable")[:10]
    assert [(r.layer, r.head) for r in noop.itertuples()] == [
        (int(i) // sep.shape[1] + 1, int(i) % sep.shape[1] + 1) for i in order]
    assert noop.iloc[0]["to [SEP]"] == pytest.approx(sep.max(), abs=1e-6)
    from url_util import bound

    assert bound(at)["noop_rank"] == "sep"  # in the link
    maps = next(c for c in specs(at) if "Share of attention per head" in json.dumps(
        c.get("title")))
    assert maps["resolve"] == {"scale": {"color": "independent"}}
    assert maps["spec"]["encoding"]["color"]["scale"] == {"domainMin": 0, "scheme": "blues"}

    # gradients: the embedded MiniLM has no LM head and no task head; the page says so
    infos = " ".join(i.value for i in at.info)
    assert "no trained masked-language-model head" in infos and "BertModel" not in infos
    assert not at.error

    # the JSON download and the CSV/PNG/SVG exports are there
    labels = [b.label for b in downloads(at)]
    assert sum(lbl == "CSV" for lbl in labels) == 6 and sum(lbl == "SVG" for lbl in labels) == 6
    assert any("JSON" in lbl for lbl in labels)


def test_page_pasted_corpus_and_bad_input(app):
    at = app
    at.button_group(key="noop_source").set_value("Paste")
    at.run()
    assert "Paste some sentences" in " ".join(i.value for i in at.info)
    at.text_area(key="noop_paste").input("The soup was cold.\n\nThe staff, however, were "
                                         "kind.\tWe stayed.")
    at.run()
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Examples"] == "2"
    assert "Skipped 1 blank line(s)." in [c.value for c in at.caption]
    assert "(2 examples)" in at.markdown[0].value
    # pasted text with nothing the model can read: one clear message, no traceback
    at.text_area(key="noop_paste").input("\u200b\u200b")
    at.run()
    assert not at.exception
    assert "None of the examples has any token this model can read." in at.error[0].value


def test_page_gradients_for_a_checkpoint_with_an_lm_head(monkeypatch, tmp_path):
    """A checkpoint that ships a masked-LM head gets the gradient chart, from its own loss."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    from analysis.core.models import default_model_path
    from ui.common.frame.links import SOURCE_FOLDER

    tok = AutoTokenizer.from_pretrained(default_model_path())
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=3,
                     num_attention_heads=4, intermediate_size=37, max_position_embeddings=128)
    BertForMaskedLM(cfg).save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    at = AppTest.from_file(APP, default_timeout=240)
    # the shared sidebar's model picker (URL-bound): a local folder
    at.query_params["src"] = SOURCE_FOLDER
    at.query_params["model"] = str(tmp_path)
    at.run()
    at.session_state["noop_max"] = CAP
    at.session_state["noop_ngrad"] = 6
    at.switch_page("pages/noop.py")
    at.run()
    assert not at.exception and not at.error
    assert {m.label: m.value for m in at.metric}["Examples"] == str(CAP)
    assert any("masked-language-model loss" in c.value for c in at.caption)
    grad = chart_data(at, "Gradient of the loss")
    assert sorted(grad["to"].unique()) == sorted(["[CLS]", "[SEP]", ". and ,", "other tokens"])
    assert sorted(grad["layer"].unique()) == [1, 2, 3]
    assert (grad["mean_abs_grad"] > 0).all()
    fig2 = chart_data(at, "points: heads")
    assert len(fig2) == 3 * 3 * 4  # three statistics x 3 layers x 4 heads


def _chart_script():
    import altair as alt
    import pandas as pd
    import streamlit as st

    from ui.common.chart_cache import cached_chart, draw

    builds = st.session_state.setdefault("builds", [])

    def build():
        builds.append(1)
        df = pd.DataFrame({"layer": [1, 1, 2, 2], "head": [1, 2, 1, 2],
                           "value": [0.1, 0.4, 0.9, 0.25]})
        return alt.Chart(df).mark_rect().encode(x="head:O", y="layer:O", color="value:Q") \
            .properties(title="Tiny map"), df

    built = cached_chart(("tiny map", "spec", "fingerprint-1", 4), build)
    draw(built, stretch=True)
    st.altair_chart(built.chart, width="stretch")  # what the page drew before: the same view
    st.write(f"title={built.title} builds={len(builds)} spec={built.spec is not None}")


def _named_alike(chart) -> str:
    """A drawn chart's spec with its datasets' names (Altair's content hash for a cached spec,
    Streamlit's for ``st.altair_chart``) replaced by their order."""
    spec = chart.proto.spec
    for k, d in enumerate(chart.proto.datasets):
        spec = spec.replace(d.name, f"dataset-{k}")
    return spec


def test_cached_charts_are_built_once_and_draw_what_altair_chart_draws():
    """A rerun with cached results builds no chart again (rerun cost, issue #13), and the cached
    spec is exactly what ``st.altair_chart`` sends: the same spec (up to the datasets' names),
    the same Arrow data."""
    from ui.common.chart_cache import _built

    _built.clear()
    at = AppTest.from_function(_chart_script).run()
    assert not at.exception, at.exception
    drawn, reference = at.get("vega_lite_chart")
    assert _without_canvas(_named_alike(drawn)) == json.loads(_named_alike(reference))
    assert json.loads(drawn.proto.spec)["title"] == "Tiny map"
    name = drawn.proto.datasets[0].name
    assert [d.data for d in drawn.proto.datasets] == [d.data for d in reference.proto.datasets]
    assert drawn.proto.datasets and drawn.proto.datasets[0].data.data
    assert at.markdown[0].value == "title=Tiny map builds=1 spec=True"
    at.run()
    at.run()
    drawn, reference = at.get("vega_lite_chart")
    assert _without_canvas(_named_alike(drawn)) == json.loads(_named_alike(reference))
    assert [d.name for d in drawn.proto.datasets] == [name]  # the same dataset on each rerun
    assert [d.data for d in drawn.proto.datasets] == [d.data for d in reference.proto.datasets]
    assert at.markdown[0].value == "title=Tiny map builds=1 spec=True"  # never rebuilt


def _without_canvas(spec: str) -> dict:
    """The drawn spec less the one thing draw() adds to a chart with a gradient legend: the
    canvas renderer (issue 22: the SVG renderer's colour bar vanished after a URL change)."""
    d = json.loads(spec)
    assert d.pop("usermeta") == {"embedOptions": {"renderer": "canvas"}}
    return d


def test_only_gradient_legends_are_drawn_on_a_canvas():
    """with_renderer: a quantitative colour with a legend (any layer) -> canvas; a nominal
    colour or no legend keeps Streamlit's SVG; a renderer the spec names stays."""
    from ui.common.chart_cache import has_gradient_legend, with_renderer

    grad = {"mark": "rect", "encoding": {"color": {"field": "w", "type": "quantitative"}}}
    nominal = {"mark": "bar", "encoding": {"color": {"field": "k", "type": "nominal"}}}
    no_legend = {"mark": "rect", "encoding": {"color": {"field": "w", "type": "quantitative",
                                                         "legend": None}}}
    assert has_gradient_legend({"hconcat": [nominal, {"layer": [grad]}]})
    assert not has_gradient_legend(nominal) and not has_gradient_legend(no_legend)
    assert with_renderer(grad)["usermeta"] == {"embedOptions": {"renderer": "canvas"}}
    assert "usermeta" not in with_renderer(nominal) and "usermeta" not in grad
    svg = dict(grad, usermeta={"embedOptions": {"renderer": "svg"}})
    assert with_renderer(svg) is svg


def test_owned_values_are_built_once_per_owner_and_forgotten_with_it():
    """``ui.common.chart_cache.owned``: the memo of a result kept in the session (Aspect heads)."""
    import gc

    from ui.common.chart_cache import _OWNED, owned

    class Result:  # a result object, as the session keeps it
        pass

    calls = []
    first, second = Result(), Result()
    assert owned(first, "table", lambda: calls.append(1) or "A") == "A"
    assert owned(first, "table", lambda: calls.append(1) or "B") == "A"  # not rebuilt
    assert owned(second, "table", lambda: calls.append(1) or "C") == "C"  # another owner
    assert len(calls) == 2 and id(first) in _OWNED
    key = id(first)
    del first
    gc.collect()
    assert key not in _OWNED  # forgotten with its owner
