"""AppTest of the Drift page: the default model vs a small fine-tuned copy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from analysis.drift import PATTERN_TYPES, compare_models, load_pair
from analysis.core.encoding import encode_dataset

from apptest_util import chart_frames
from ui.common.errors import plain
from test_drift_pair import make_two_layer_folder

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(autouse=True)
def no_example(monkeypatch, tmp_path):
    """No example checkpoint (an empty cache folder) and no background build: the after box
    is what these tests compare with."""
    monkeypatch.setenv("DASHBOARD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DASHBOARD_EXAMPLE_AUTOBUILD", "0")


@pytest.fixture(scope="module")
def finetuned(finetuned_copy):
    return str(finetuned_copy)  # tests/conftest.py: made once per test process


def _frame(at, column):
    """The dataframe on the page that has ``column``."""
    frames = [d.value for d in at.dataframe if column in list(d.value.columns)]
    assert len(frames) == 1, column
    return frames[0]


def _open_page():
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    at.switch_page("pages/drift.py")
    at.run()
    assert not at.exception
    return at


def test_drift_page_without_after_model_explains_how_to_get_one():
    at = _open_page()
    assert [t.value for t in at.title] == ["Fine-tuning drift"]
    info = " ".join(i.value for i in at.info)
    assert "Aspect heads" in info and "which heads changed most" in info
    assert "The example checkpoint is not built yet" in info  # what empty would compare with
    # the command line is for local users, under an expander (never in the visitor's text)
    assert "python -m analysis" not in info
    local = " ".join(m.value for e in at.expander if "For local users" in e.label
                     for m in e.markdown)
    assert "python -m analysis aspects finetune" in local
    assert "python -m analysis aspects example" in local
    assert not at.error


def test_drift_page_in_demo_mode_shows_no_command_line(monkeypatch):
    """Demo mode: what the page will show, and no command, folder or 'paste DIR here'."""
    from ui.server.settings import settings

    monkeypatch.setenv("DASHBOARD_MODE", "demo")
    settings.cache_clear()
    try:
        at = _open_page()
    finally:
        monkeypatch.delenv("DASHBOARD_MODE")
        settings.cache_clear()
    text = " ".join(e.value for e in [*at.info, *at.markdown, *at.caption])
    assert "which heads changed most" in text
    assert "python -m analysis" not in text and "DIR" not in text
    assert not [e for e in at.expander if "For local users" in e.label]


def test_the_build_says_the_time_left_from_the_steps_done():
    """ui.common.example: the waiting line says the one estimate (analysis.core.example)."""
    from ui.common.example import ExampleStatus

    status = ExampleStatus(False, True, 0.25, "Building the example checkpoint: epoch 3/10, "
                           "step 150/600", estimate="about 2 minutes left, at the speed of its "
                                                    "steps so far")
    assert status.message == ("Building the example checkpoint: epoch 3/10, step 150/600: about "
                              "2 minutes left, at the speed of its steps so far. The page opens "
                              "on it by itself when it is ready.")


def test_drift_page_compares_default_with_finetuned_copy(finetuned):
    at = _open_page()
    at.number_input(key="drift_max").set_value(12)
    at.text_input(key="drift_after").set_value(finetuned)
    at.run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    assert at.success and at.success[0].value.startswith("Most changed head: layer ")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Examples"] == "12"
    assert 0.0 < float(metrics["Mean head cosine"]) < 1.0
    # tables: the 10 most changed examples of the picked head, RSA/CKA per layer incl. embeddings
    low = _frame(at, "attention page (before)")
    assert len(low) == 10 and (np.diff(low["cosine"].to_numpy()) >= 0).all()
    rep = _frame(at, "CKA")
    assert rep.shape == (7, 3) and list(rep["layer"]) == list(range(7))
    assert ((rep["CKA"] > 0) & (rep["CKA"] <= 1 + 1e-9)).all()
    assert ((rep["RSA"] > 0) & (rep["RSA"] <= 1 + 1e-9)).all()
    assert rep["CKA"].iloc[-1] < 1.0  # fine-tuning moved the top layer
    moves = _frame(at, "block")
    assert moves.shape == (5, 6) and int(moves[list(PATTERN_TYPES)].to_numpy().sum()) == 12 * 6 * 12
    frames = chart_frames(at)
    assert len(frames) >= 9
    grid = [f for f in frames if "cosine" in f.columns and "head" in f.columns]
    assert grid and len(grid[0]) == 6 * 12
    # the heatmap shows the library's numbers for the same corpus and models
    from analysis.core.corpus import sample_corpus

    before, after = load_pair("default", finetuned)
    ref = compare_models(before, after, encode_dataset(
        before.tokenizer, sample_corpus(max_examples=12), max_examples=12)).cosine
    g = grid[0].sort_values(["layer", "head"])
    np.testing.assert_allclose(g["cosine"].to_numpy().reshape(6, 12), ref, atol=1e-6)
    subheaders = [s.value for s in at.subheader]
    for expected in ("Per-head cosine similarity, before vs after", "One head",
                     "Layerwise representation similarity", "No-op drift",
                     "Pattern types (Kovaleva et al. 2019)", "Split by label and by prediction"):
        assert expected in subheaders
    # the sample corpus has no labels: said plainly
    assert any("no label column" in i.value for i in at.info)
    # picking another head and moving a threshold re-renders without recomputing errors
    at.selectbox(key="drift_layer").set_value(1)
    at.selectbox(key="drift_head").set_value(1)
    at.slider(key="drift_t_vertical").set_value(0.2)
    at.run()
    assert not at.exception
    assert "Head 1-1" in " ".join(c.value for c in at.caption)


def test_drift_page_missing_folder_and_identical_models(tmp_path):
    at = _open_page()
    at.number_input(key="drift_max").set_value(4)
    at.text_input(key="drift_after").set_value(str(tmp_path / "nowhere"))
    at.run()
    assert not at.exception
    assert len(at.error) == 1 and at.error[0].value.startswith(plain("After model: The folder"))
    at.text_input(key="drift_after").set_value(str(make_two_layer_folder(tmp_path / "small")))
    at.run()
    assert not at.exception
    assert len(at.error) == 1 and at.error[0].value.startswith(plain(
        "The models have different shapes: before has 6 layers x 12 heads, after has 2 layers"))
    at.text_input(key="drift_after").set_value("default")
    at.run()
    assert not at.exception and not at.error
    assert any("identical weights" in i.value for i in at.info)
