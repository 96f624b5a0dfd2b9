"""``python -m analysis precompute`` (issue 49): every registered study with an example view
runs it through ``STUDY.run`` on the example checkpoint and writes its JSON with the recipe;
the file reads back into the study's result (``from_json``) with the same JSON; bad input is
one line. On a tiny stand-in example (tests/importance_util.py)."""

from __future__ import annotations

import json

import pytest

from analysis.cli import main
from analysis.core import example
from importance_util import stand_in_example


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DASHBOARD_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_the_registry_finds_the_studies_with_an_example_view():
    from analysis.cli.studies import NAMES, registered, with_example

    found = with_example()
    assert {"aspects", "drift", "importance", "patching"} <= set(found)
    assert all(s.name == n for n, s in registered().items())
    assert list(found) == [n for n in NAMES if n in found]  # the pages' order


def test_precompute_writes_each_studys_example_view(cache, tmp_path, capsys):
    from analysis.aspects.study import AspectHeadsResult
    from analysis.importance import ImportanceResult

    stand_in_example(cache)
    out = tmp_path / "pre"
    assert main(["precompute", "importance", "aspects", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    for name, result in (("importance", ImportanceResult), ("aspects", AspectHeadsResult)):
        assert f"wrote {out / name}.json: " in printed
        record = example.precomputed(name, root=out)
        assert record is not None, name  # the current recipe's
        assert (record["model"], record["command"]) == (
            "example", f"python -m analysis precompute {name}")
        back = result.from_json(record["result"])
        assert back.to_json() == record["result"], name  # the schema's round trip
    imp = example.precomputed("importance", root=out)["result"]
    assert imp["metric"] == "aspect_f1" and imp["pruning"] is not None  # the page's view
    assert len(imp["heads"]) == 2 and len(imp["heads"][0]) == 4  # the stand-in's 2 x 4 heads
    heads = example.precomputed("aspects", root=out)["result"]["heads"]
    assert len(heads) == 4 * 8  # every head of every kind: the page draws their maps


def test_bad_input_is_one_line(cache, capsys):
    assert main(["precompute", "importance"]) == 2  # no example yet
    err = capsys.readouterr().err
    assert err.startswith("error: The example checkpoint is not built yet: run `python -m "
                          "analysis aspects example` once") and err.count("\n") == 1
    for name in ("attention", "noop", "nope"):  # noop's example is on the embedded model
        assert main(["precompute", name]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: {name} is not a study with an example view; use one "
                              "of: aspects, drift, importance, patching")


def test_the_shipped_files_read_back_into_their_results():
    """The files in data/precomputed (the real example's, small) fit their schemas and read
    back into the results the pages draw, with the same JSON."""
    import numpy as np

    from analysis.drift.study import DriftSummary
    from analysis.patching.study import PatchingResult

    for name in ("aspects", "drift", "importance", "patching"):
        path = example.PRECOMPUTED_DIR / f"{name}.json"
        assert path.stat().st_size < 100_000, name
        assert example.precomputed(name) is not None, name  # the current recipe's
    data = json.loads((example.PRECOMPUTED_DIR / "drift.json").read_text())["result"]
    back = DriftSummary.from_json(data)
    assert back.to_json() == data
    assert back.cosine.shape == (back.n_layers, back.n_heads) and np.isfinite(back.cka).all()
    data = json.loads((example.PRECOMPUTED_DIR / "patching.json").read_text())["result"]
    back = PatchingResult.from_json(data)
    assert back.to_json() == data
    assert back.pair.predictions == (data["predictions"]["clean"],
                                     data["predictions"]["counter"])
    assert back.corpus.mean.shape == back.pair.heads.shape == (6, 12)
