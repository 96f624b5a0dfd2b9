"""Issue 49: while the example checkpoint is missing or being built, the pages that open on it
(Aspect heads, Fine-tuning drift, Causal patching; Head importance: tests/app/
test_page_importance.py) show its own results at once, precomputed with its recipe
(data/precomputed/<study>.json, ``python -m analysis precompute``), labelled so: the page's
numbers and charts are the file's. A file of another recipe is not shown."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from apptest_util import chart_frames

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
LABEL = "Precomputed for the example checkpoint (recipe v3, made "


@pytest.fixture(autouse=True)
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("DASHBOARD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DASHBOARD_EXAMPLE_AUTOBUILD", "0")
    return tmp_path / "cache"


def _record(study: str) -> dict:
    return json.loads((ROOT / "data" / "precomputed" / f"{study}.json").read_text())


def _open(page: str):
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page(f"pages/{page}.py")
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


def _info(at) -> str:
    return " ".join(i.value for i in at.info)


def test_aspect_heads_shows_the_examples_heads_meanwhile():
    at = _open("aspects")
    assert "What this page will show" in " ".join(m.value for m in at.markdown)
    assert LABEL in _info(at)
    got = _record("aspects")["result"]
    assert got["model"] == "example" and len(got["heads"]) == 4 * 72
    # the aspect kind's map: every head's score, as in the file (layers, heads from 1)
    heat = next(f for f in chart_frames(at) if "score" in f.columns)
    rows = [r for r in got["heads"] if r["kind"] == "aspect"]
    want = {(r["layer"] + 1, r["head"] + 1): r["score"] for r in rows}
    assert len(heat) == 72
    assert all(np.isclose(s, want[(int(layer), int(head))])
               for layer, head, s in heat[["layer", "head", "score"]].itertuples(index=False))
    # the top heads' table starts with the file's best head of the kind
    top = at.dataframe[0].value
    assert (int(top["layer"][0]), int(top["head"][0])) == (rows[0]["layer"] + 1,
                                                           rows[0]["head"] + 1)


def test_drift_shows_the_examples_drift_meanwhile():
    at = _open("drift")
    assert LABEL in _info(at)
    got = _record("drift")["result"]
    assert got["n_examples"] == 200 and (got["before"], got["after"]) == ("default", "example")
    assert at.success[0].value == got["summary"]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Mean head cosine"] == f"{np.mean(got['cosine']):.3f}"
    assert metrics["CKA, last layer"] == f"{got['cka'][-1]:.3f}"
    grid = next(f for f in chart_frames(at) if "cosine" in f.columns and "head" in f.columns)
    assert np.allclose(grid.sort_values(["layer", "head"])["cosine"].to_numpy(),
                       np.ravel(got["cosine"]))
    # another corpus than the one it was made on: no precomputed result
    at.number_input(key="drift_max").set_value(50)
    at.run()
    assert LABEL not in _info(at) and not at.metric


def test_causal_patching_shows_the_examples_opening_pair_meanwhile():
    at = _open("patching")
    assert LABEL in _info(at)
    got = _record("patching")["result"]
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["Input's answer"], metrics["Counterfactual's answer"]) == (
        got["predictions"]["clean"], got["predictions"]["counter"])
    heads = np.array([[np.nan if v is None else v for v in row] for row in got["heads"]])
    l, h = np.unravel_index(int(np.nanargmax(heads)), heads.shape)
    assert metrics["Head carrying most"] == f"{l + 1}-{h + 1} ({heads[l, h]:+.0%})"
    frames = chart_frames(at)
    grid = next(f for f in frames if "effect" in f.columns and "head" in f.columns)
    assert np.allclose(grid.sort_values(["layer", "head"])["effect"].to_numpy(),
                       heads.ravel(), equal_nan=True)
    # the corpus view over the held-out pairs is there too, with its reading
    assert got["corpus"]["pairs"] > 0
    md = " ".join(m.value for m in at.markdown)
    assert f"Averaged over {got['corpus']['pairs']} pairs" in md
    # denoising was not precomputed: the page says what it will show, no numbers
    at.radio(key="patching_direction").set_value("denoising")
    at.run()
    assert LABEL not in _info(at) and not at.metric


def test_a_file_of_another_recipe_is_not_shown(tmp_path, monkeypatch):
    from analysis.core import example

    record = _record("drift")
    record["recipe"] = {**record["recipe"], "epochs": 3}
    (tmp_path / "drift.json").write_text(json.dumps(record))
    monkeypatch.setattr(example, "PRECOMPUTED_DIR", tmp_path)
    at = _open("drift")
    assert LABEL not in _info(at) and not at.metric
