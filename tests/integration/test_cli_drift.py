"""``python -m analysis drift`` (alias ``compare``): the JSON holds the library's numbers;
failures end with one plain line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from analysis.drift import PATTERN_TYPES, compare_models, load_pair
from analysis.core.encoding import encode_corpus

from test_drift_run import LABELS, SENTENCES


@pytest.fixture(scope="module")
def finetuned(finetuned_copy):
    return str(finetuned_copy)  # tests/conftest.py: made once per test process


def test_cli_writes_the_measures_and_fails_plainly(tmp_path, finetuned, capsys, default_model):
    from analysis.cli import main

    data = tmp_path / "reviews.jsonl"
    data.write_text("\n".join(json.dumps({"text": t, "label": lab})
                              for t, lab in zip(SENTENCES, LABELS)) + "\n", encoding="utf-8")
    out = tmp_path / "drift.json"
    rc = main(["drift", "--after", finetuned, "--data", str(data), "--max-examples", "5",
               "--out", str(out)])
    assert rc == 0
    doc = json.loads(out.read_text())
    assert np.array(doc["cosine"]).shape == (6, 12)
    assert len(doc["rsa"]) == len(doc["cka"]) == 7
    assert np.array(doc["noop_delta"]["cls"]).shape == (6, 12)
    assert np.array(doc["noop_delta"]["sep"]).shape == (6, 12)
    assert set(doc["patterns"]["before"]) == set(PATTERN_TYPES)
    assert sum(doc["patterns"]["after"].values()) == pytest.approx(1.0)
    assert doc["n_examples"] == 5
    assert set(doc["groups"]["label"]) == {"negative", "positive"}
    # the same numbers as the library
    before, after = load_pair("default", finetuned)
    res = compare_models(before, after, encode_corpus(default_model.tokenizer, SENTENCES[:5]))
    np.testing.assert_allclose(doc["cosine"], res.cosine, atol=1e-5)
    # the reading's per-layer interval over examples (issue 35): mean +- 1.96 s / sqrt(5)
    per = res.cosine_examples.mean(2)
    half = 1.959964 * per.std(0, ddof=1) / np.sqrt(5)
    np.testing.assert_allclose(doc["layers_ci"], np.stack([per.mean(0) - half,
                                                           per.mean(0) + half], 1), atol=1e-5)
    capsys.readouterr()
    assert main(["compare", "--after", str(tmp_path / "missing"), "--data", str(data),
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "After model: The folder" in err[0]


def test_compare_is_an_alias_of_drift():
    from analysis.cli import build_parser
    from analysis.cli.drift import run

    argv = ["--after", "a", "--data", "d.txt", "--out", "o.json"]
    new, old = build_parser().parse_args(["drift"] + argv), build_parser().parse_args(
        ["compare"] + argv)
    assert new.func is run and old.func is run
    assert {k: v for k, v in vars(new).items() if k != "command"} == {
        k: v for k, v in vars(old).items() if k != "command"}
