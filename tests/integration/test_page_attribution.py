"""AppTest of the Attribution page: the embedded default when the example is not built (a plain
sentence on gradient methods), a tiny classifier with hostile text (prediction, colouring,
map, agreement and faithfulness equal the library's numbers)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from analysis.attribution import attribute, faithfulness, input_reading, load_for_attribution
from analysis.attribution.data import heldout_examples
from apptest_util import chart_frames
from attribution_models import tiny_classifier_dir
from ui.common.errors import plain
from ui.common.html import esc
from ui.common.frame.sidebar import EXAMPLE_A

APP = str(Path(__file__).resolve().parents[2] / "app.py")
HOSTILE = 'The <b>x</b> soup ${x} was "cold" \\ and `rude`'


def open_page(monkeypatch, **params) -> AppTest:

    at = AppTest.from_file(APP, default_timeout=240)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    at.switch_page("pages/attribution.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def html_blocks(at) -> list[str]:
    return [m.value for m in at.markdown if "attr-rows" in m.value]


def test_default_model_when_the_example_is_not_built(monkeypatch, tmp_path, default_model):
    monkeypatch.setenv("DASHBOARD_CACHE", str(tmp_path / "empty"))
    at = open_page(monkeypatch)
    assert [t.value for t in at.title] == ["Attribution"]
    infos = " ".join(i.value for i in at.info)
    assert "example checkpoint is not built" in infos and "need a fine-tuned model" in infos
    ref = attribute(default_model, EXAMPLE_A)
    assert plain(input_reading(ref)) in [m.value for m in at.markdown]
    rows = html_blocks(at)[0]
    for name in ("Raw attention", "ALTI", "Value zeroing"):
        assert name in rows
    assert "Integrated gradients" not in rows
    # the map (ALTI, last layer) is the library's matrix
    titles = [json.dumps(json.loads(c.proto.spec).get("title")) for c in at.get("vega_lite_chart")]
    assert any("ALTI: layer 6" in t for t in titles)
    # the corpus tab says why there is nothing to measure
    assert any("no classification head" in i.value for i in at.info)


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return tiny_classifier_dir(tmp_path_factory)


def test_tiny_classifier_hostile_text_and_faithfulness(monkeypatch, tiny_dir):
    at = open_page(monkeypatch, src="Local folder", model=str(tiny_dir), mode="Sentence pair",
                   a=HOSTILE, b="service", attr_model="The sidebar's model", attr_fmax="3",
                   attr_map="norm_resln", attr_agg="Through the layers", attr_layer="1")
    loaded = load_for_attribution(str(tiny_dir))
    ref = attribute(loaded, HOSTILE, "service")
    metric = at.metric[0]
    assert metric.label == "Prediction" and metric.value == ref.prediction["label"]
    rows = html_blocks(at)[0]
    assert "<b>" not in rows and "Integrated gradients" in rows
    assert ">&lt;</span>" in rows and ">&quot;</span>" in rows and ">\\</span>" in rows
    for tok, v in zip(ref.tokens, ref.methods["alti"].input):
        assert f"title='{esc(tok)}: {v:.4f}'" in rows
    # the deep link's map: norms with residual and layer norm, aggregated through layer 1
    frame = [f for f in chart_frames(at) if "weight" in f.columns][0]
    n = ref.n_tokens
    got = np.zeros((n, n))
    got[frame["from_pos"], frame["to_pos"]] = frame["weight"]
    np.testing.assert_allclose(got, ref.methods["norm_resln"].rollout[0], atol=1e-9)
    assert at.selectbox(key="attr_layer").value == 1
    # issue 49: before the (minutes-long) run, how long it should take here
    ask = next(c.value for c in at.caption if c.value.startswith("Press the button"))
    assert re.search(r": about \d+ (seconds|minutes) here, estimated from one timed pass of "
                     r"the model \(longer while the server is busy\)\.$", ask), ask
    # faithfulness: 3 held-out pairs, same numbers as the library
    at.button(key="attr-faith-run").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    table = at.dataframe[0].value
    texts, pairs, _ = heldout_examples(3)
    f = faithfulness(loaded, texts, pairs)
    got = dict(zip(table["method"], table["comprehensiveness (points)"]))
    assert got["ALTI"] == pytest.approx(100 * f.methods["alti"]["comprehensiveness"]["mean"])
    assert got["Random ranking"] == pytest.approx(100 * f.random["comprehensiveness"]["mean"])
    assert np.isfinite(table["sufficiency (points)"]).all()
    # the reading says its falls in the table's unit
    r = f.random["comprehensiveness"]
    md = " ".join(m.value for m in at.markdown)
    assert plain(f"a random choice of words: {'falls' if r['mean'] >= 0 else 'rises'} by "
                 f"{abs(got['Random ranking']):.1f} points") in md


def test_one_input_is_explained_while_a_corpus_job_holds_the_queue(monkeypatch, tiny_dir):
    """Issue 35: one sentence's attributions run in the queue's short lane, so a corpus job
    holding the only corpus slot (here: held by this test's thread for the whole run) does not
    hold them up; the examples box says the speed this server measured, never a constant."""
    import ui.common.jobs as jobs
    from ui.attribution.state import FAITH_MAX, KIND_FAITH
    from analysis.core.execution.queue import JobQueue

    q = JobQueue(slots=1)
    held = q.join("Corpus statistics", "held", kind="No-op statistics", size=300,
                  unit="examples")
    assert q.wait_turn(held) is None
    monkeypatch.setattr(jobs, "job_queue", lambda: q)
    text = "The lanes were quick, but the soup was cold."  # not cached by another test
    at = open_page(monkeypatch, src="Local folder", model=str(tiny_dir), a=text,
                   attr_model="The sidebar's model")
    loaded = load_for_attribution(str(tiny_dir))
    assert at.metric[0].value == attribute(loaded, text).prediction["label"]
    assert q.state() == {"running": ["Corpus statistics"], "waiting": 0}
    assert at.number_input(key=FAITH_MAX).proto.help == (
        "Each example is explained by every method and then run again with words removed. "
        "How long it takes on this server is not measured yet: the first run will tell.")
    q.rates.record(KIND_FAITH, False, 200.0, 10)  # a finished run: 20 s per example
    at.run()
    assert at.number_input(key=FAITH_MAX).proto.help.endswith(
        "On this server: about 20 seconds per example, measured on its last runs.")
    q.leave(held)


def test_a_checkpoint_with_a_damaged_card_is_refused_in_one_line(monkeypatch, tiny_dir,
                                                                  tmp_path):
    """The sidebar's model is a folder of this dashboard whose card is damaged: the page loads
    it with its head through the one shared loader (ui.common.frame.resources.get_headed),
    which reads the card, and says what is wrong in one line instead of a traceback."""
    import shutil

    folder = tmp_path / "damaged"
    shutil.copytree(tiny_dir, folder)
    (folder / "absa_card.json").write_text(json.dumps({"task": "bogus"}))
    at = open_page(monkeypatch, src="Local folder", model=str(folder),
                   attr_model="The sidebar's model")
    errors = [e.value for e in at.error]
    assert any("the card names no known task ('bogus')" in e for e in errors), errors
    assert not html_blocks(at)  # nothing explained with a model the page could not read
