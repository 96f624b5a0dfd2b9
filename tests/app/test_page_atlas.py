"""AppTest of the Head atlas, the app's first page: the example's precomputed atlas at once
(the example not built), then a sidebar checkpoint's atlas computed through the queue one
study at a time: the grid, the evidence card's links to each page with the head pinned, the
thresholds in the URL moving the roles, and the same numbers as ``python -m analysis atlas``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from analysis.atlas import precomputed
from apptest_util import chart_frames
from builders import run_cli
from test_atlas_run import _checkpoint
from ui.atlas import state as S
from url_util import bound

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(autouse=True)
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("DASHBOARD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DASHBOARD_EXAMPLE_AUTOBUILD", "0")
    return tmp_path / "cache"


def test_the_first_page_shows_the_examples_precomputed_atlas_at_once():
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["Head atlas"]
    pre = precomputed.load()
    assert pre is not None, "data/precomputed/atlas.json is missing or of another recipe"
    result, head = pre
    said = " ".join(c.value for c in at.caption)
    assert f"Precomputed for the example checkpoint (recipe v{head['version']}" in said
    assert head["label"] in said
    grid = next(f for f in chart_frames(at) if "family" in f.columns)
    want = result.heads()
    assert len(grid) == len(want) == result.n_layers * result.n_heads
    assert list(grid["role"]) == [h["role"] for h in want]
    said = " ".join(c.value for c in at.caption)  # under the verdict, a caption
    assert "Not computed on this server yet" in said and "still being built" in said
    assert not [b for b in at.button if b.label == "Compute them"]  # nothing to compute on
    reading = " ".join(m.value for m in at.markdown)
    assert result.to_json()["reading"][0].split(":")[0] in reading


def test_a_checkpoint_computed_through_the_queue_is_the_clis_atlas(tmp_path, cache):
    ck = _checkpoint(tmp_path / "ck")
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update({"src": "Local folder", "model": str(ck), S.MODEL: S.SIDEBAR})
    at.run()
    assert not at.exception, at.exception
    said = " ".join(c.value for c in at.caption)
    assert "Not computed on this server yet, 6 of the atlas's studies" in said  # none before
    next(b for b in at.button if b.label == "Compute them").click().run()
    assert not at.exception, at.exception
    assert "Computed on this server." in " ".join(c.value for c in at.caption)
    grid = next(f for f in chart_frames(at) if "family" in f.columns)
    assert len(grid) == 8 and set(grid["used"]) <= {"yes", "no"}
    # the CLI on the same inputs reads every study back and writes the page's numbers
    out = tmp_path / "atlas.json"
    done = run_cli("atlas", "--model", ck, "--before", "none", "--out", out,
                   env={"DASHBOARD_CACHE": str(cache)})
    assert done.returncode == 0 and "(0 computed, 6 read back)" in done.stdout, done.stdout
    heads = [h for row in json.loads(out.read_text())["heads"] for h in row]
    assert list(grid["role"]) == [h["role"] for h in heads]
    assert list(grid["importance"]) == [h["importance"] for h in heads]
    # the evidence card: the pinned head's numbers, each linking to its page on that head
    card = next(d.value for d in at.dataframe if "study" in d.value.columns)
    links: dict[str, list] = {}
    for study, url in zip(card["study"], card["open"]):
        links.setdefault(study, []).append(url)
    layer, head = int(at.session_state[S.LAYER]), int(at.session_state[S.HEAD])
    assert all(f"importance_layer={layer}&importance_head={head}" in u
               for u in links["Head importance"])
    assert len(links["Head importance"]) == 4  # the metric and the loss, both ways
    assert f"patching_layer={layer}&patching_head={head}" in links["Causal patching"][0]
    assert links["No-op statistics"][0].startswith("./noop")
    assert links["No-op statistics"][-1].startswith("./attention?")  # the entropy: the map
    assert f"layer={layer}&head={head}" in links["No-op statistics"][-1]
    # a threshold in the URL moves the roles: every head rests on [SEP] above 0
    at.slider(key=S.rule_key("noop")).set_value(0.0).run()
    assert bound(at)[S.rule_key("noop")] == 0.0  # the threshold is in the URL
    grid = next(f for f in chart_frames(at) if "family" in f.columns)
    assert grid["roles"].str.contains(r"\[SEP\] no-op").all()
    assert grid["family"].isin(["no-op", "mixed"]).all()
