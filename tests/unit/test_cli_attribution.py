"""The ``attribution`` command: its JSON equals the library's numbers (what the page shows),
faithfulness over a file, bad input in one line before any work."""

from __future__ import annotations

import json

import numpy as np
import pytest

from analysis.attribution import attribute, faithfulness, load_for_attribution
from attribution_models import tiny_classifier_dir

TEXT, PAIR = "The soup was cold but the staff were lovely.", "service"


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return tiny_classifier_dir(tmp_path_factory)


def test_cli_json_equals_the_library(tmp_path, tiny_dir, capsys):
    from analysis.cli import main

    out = tmp_path / "a.json"
    assert main(["attribution", "--model", str(tiny_dir), "--text", TEXT, "--pair", PAIR,
                 "--steps", "12", "--out", str(out)]) == 0
    got = json.loads(out.read_text(encoding="utf-8"))
    ref = attribute(load_for_attribution(str(tiny_dir)), TEXT, PAIR, steps=12).to_json()
    assert got["tokens"] == ref["tokens"] and got["prediction"] == ref["prediction"]
    assert list(got["methods"]) == list(ref["methods"])
    for name, entry in ref["methods"].items():
        for key in ("layers", "rollout", "input"):
            if entry[key] is None:
                assert got["methods"][name][key] is None
            else:
                np.testing.assert_allclose(got["methods"][name][key], entry[key], atol=2e-6)
    assert got["methods"]["integrated_gradients"]["completeness_gap"] == pytest.approx(
        ref["methods"]["integrated_gradients"]["completeness_gap"], abs=1e-6)
    assert "wrote" in capsys.readouterr().out
    from analysis.attribution import STUDY  # the study's result reads its JSON back

    back = STUDY.result.from_json(got)
    assert back.to_json() == got and back.methods["alti"].rollout.shape[1:] == (
        len(got["tokens"]), len(got["tokens"]))
    # a subset of methods, in the standard order
    assert main(["attribution", "--model", str(tiny_dir), "--text", TEXT, "--methods",
                 "alti,attention", "--out", str(out)]) == 0
    assert list(json.loads(out.read_text())["methods"]) == ["attention", "alti"]


def test_cli_faithfulness_equals_the_library(tmp_path, tiny_dir):
    from analysis.cli import main

    data = tmp_path / "c.txt"
    data.write_text("The food was great.\tfood\nSlow, rude service.\tservice\n"
                    "Prices are fair.\tprice\n", encoding="utf-8")
    out = tmp_path / "f.json"
    assert main(["attribution", "--model", str(tiny_dir), "--data", str(data),
                 "--faithfulness", "--methods", "attention,alti", "--ks", "10,50",
                 "--seeds", "2", "--steps", "8", "--out", str(out)]) == 0
    got = json.loads(out.read_text(encoding="utf-8"))
    ref = faithfulness(load_for_attribution(str(tiny_dir)),
                       ["The food was great.", "Slow, rude service.", "Prices are fair."],
                       ["food", "service", "price"], ["attention", "alti"], ks=(10, 50),
                       seeds=2, steps=8).to_json()
    assert got["n_examples"] == 3 and got["ks"] == [10, 50] and got["removal"] == "drop"
    for name in ("attention", "alti"):
        for key in ("comprehensiveness", "sufficiency", "loo_spearman"):
            assert got["methods"][name][key]["mean"] == pytest.approx(
                ref["methods"][name][key]["mean"], abs=1e-9)
    assert got["random"]["comprehensiveness"]["mean"] == pytest.approx(
        ref["random"]["comprehensiveness"]["mean"], abs=1e-9)
    assert got["reading"] == ref["reading"]
    from analysis.attribution import FAITHFULNESS

    assert FAITHFULNESS.result.from_json(got).to_json() == got  # the reading made again


def test_cli_bad_input_one_line(tmp_path, tiny_dir, tiny_model_dir, capsys):
    from analysis.cli import main

    o = str(tmp_path / "o.json")
    cases = [
        (["--text", "", "--out", o], "--text must not be empty"),
        (["--text", "x" * 40000, "--out", o], "--text is too long"),
        (["--text", "hi", "--methods", "alti,lime", "--out", o], "unknown method 'lime'"),
        (["--faithfulness", "--ks", "0,10", "--out", o], "--ks must be whole percentages"),
        (["--faithfulness", "--ks", "150", "--out", o], "--ks must be"),
        (["--out", o], "Give --text"),
        (["--text", "hi", "--faithfulness", "--out", o], "do not go together"),
        (["--model", str(tmp_path / "none"), "--text", "hi", "--out", o], "does not exist"),
        (["--model", str(tiny_model_dir("distilbert")), "--text", "hi", "--out", o],
         "cannot decompose"),
        (["--model", str(tiny_model_dir("gpt2")), "--text", "hi", "--out", o],
         "decoder-only"),
        (["--model", str(tiny_dir), "--text", "word " * 300, "--max-tokens", "32",
          "--out", o], "attribution takes at most 32"),
        (["--text", "hi", "--methods", "grad_input", "--model", str(tiny_model_dir("bert")),
          "--out", o], "no classification head"),
    ]
    for args, expect in cases:
        assert main(["attribution", *args]) == 2, args
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and expect in err, (args, err)
