"""``python -m analysis importance``: the JSON holds the numbers of the library call the page
makes (same defaults), and bad input ends with exit 2 and one line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from analysis.cli import main
from analysis.importance import importance_study
from analysis.importance.evalset import load_classifier, load_eval_set
from importance_util import LABELLED_CSV, cached_checkpoint, classifier_folder


def test_cli_json_equals_the_library_call(tmp_path, capsys):
    ck = cached_checkpoint("qa_m")
    out = tmp_path / "imp.json"
    rc = main(["importance", "--model", str(ck), "--data", "sample", "--max-examples", "5",
               "--method", "mask", "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    got = json.loads(out.read_text())
    loaded, card = load_classifier(str(ck))
    ev = load_eval_set(loaded, card, "sample", max_examples=5)
    ref = importance_study(loaded, ev, method="mask").to_json()
    assert got["metric"] == "aspect_f1" and got["pruning"] is None
    for key in ("intact", "heads", "heads_ci", "layers", "gradient_importance"):
        assert np.allclose(np.array(got[key], dtype=float), np.array(ref[key], dtype=float),
                           equal_nan=True, atol=1e-9), key
    assert "wrote" in capsys.readouterr().out


def test_cli_prune_on_a_labelled_corpus(tmp_path):
    folder = classifier_folder(tmp_path / "clf")
    data = tmp_path / "d.csv"
    data.write_text(LABELLED_CSV)
    out = tmp_path / "p.json"
    assert main(["importance", "--model", str(folder), "--data", str(data), "--prune",
                 "--metric", "loss", "--out", str(out)]) == 0
    got = json.loads(out.read_text())
    assert got["metric"] == "loss" and len(got["pruning"]["by_importance"]) == 10
    assert got["pruning"]["by_importance"][0] == pytest.approx(got["intact"])
    assert np.shape(got["pruning"]["random_band"]) == (10, 2)


@pytest.mark.parametrize("case", ["no_head", "no_labels", "wrong_task", "bad_metric",
                                  "bad_method"])
def test_bad_input_is_one_line(case, tmp_path, tiny_model_dir, capsys):
    out = str(tmp_path / "x.json")
    folder = tmp_path / "clf"
    args = {
        "no_head": ["--model", str(tiny_model_dir("bert")), "--data", "sample"],
        "no_labels": ["--model", str(classifier_folder(folder)), "--data",
                      str(_write(tmp_path / "n.csv", "text\ngood\nbad\n"))],
        "wrong_task": ["--model", str(cached_checkpoint("qa_m")), "--data", "sample",
                       "--task", "nli_m"],
        "bad_metric": ["--model", str(cached_checkpoint("qa_m")), "--data", "sample",
                       "--metric", "accuracy", "--max-examples", "2"],
        "bad_method": ["--model", "example", "--data", "sample", "--method", "zero"],
    }[case]
    assert main(["importance", *args, "--out", out]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err
    assert {"no_head": "no task head", "no_labels": "no labels",
            "wrong_task": "fine-tuned for QA-M, not NLI-M", "bad_metric": "does not fit",
            "bad_method": "--method"}[case] in err


def _write(path, text):
    path.write_text(text)
    return path


def test_cli_one_example_equals_the_library_call(tmp_path, capsys):
    """--text REVIEW --aspect C --label Y: the per-example JSON is the library's (the page's)
    numbers for the review asked about the aspect."""
    from analysis.importance.one import encode_one, one_example_study

    ck = cached_checkpoint("nli_m")
    out = tmp_path / "one.json"
    review = "the food was great but the service was slow"
    rc = main(["importance", "--model", str(ck), "--text", review, "--aspect", "service",
               "--label", "negative", "--method", "mask", "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    got = json.loads(out.read_text())
    loaded, card = load_classifier(str(ck))
    ref = one_example_study(loaded, encode_one(loaded, card, review, None, "negative",
                                               "service"), method="mask")
    assert (got["aspect"], got["label"], got["method"]) == ("service", "negative", "mask")
    assert got["intervals"] is None and got["prediction"] == ref.classes[ref.predicted]
    for m in ("gold_probability", "predicted_probability", "loss"):
        assert np.allclose(got["heads"][m], ref.heads[m], atol=1e-9), m
        assert np.allclose(got["layers"][m], ref.layers[m], atol=1e-9), m
    assert got["heads"]["flips"] == ref.heads["flips"].tolist()
    assert np.allclose(got["gradient_importance"], ref.gradient_raw, rtol=1e-9)
    assert "wrote" in capsys.readouterr().out


def test_cli_one_example_text_and_pair(tmp_path):
    folder = classifier_folder(tmp_path / "clf")
    out = tmp_path / "one.json"
    assert main(["importance", "--model", str(folder), "--text", "the soup was cold",
                 "--pair", "was it good?", "--label", "neg", "--out", str(out)]) == 0
    got = json.loads(out.read_text())
    assert (got["text"], got["pair"], got["label"]) == ("the soup was cold", "was it good?",
                                                        "neg")
    assert got["classes"] == ["neg", "neu", "pos"] and np.shape(got["heads"]["loss"]) == (2, 4)


@pytest.mark.parametrize("case", ["empty", "unknown_label", "no_label", "with_data",
                                  "neither", "label_without_text", "bad_aspect"])
def test_bad_one_example_input_is_one_line(case, tmp_path, capsys):
    clf = str(classifier_folder(tmp_path / "clf"))
    ck = str(cached_checkpoint("nli_m"))
    args = {
        "empty": ["--model", clf, "--text", "   ", "--label", "neg"],
        "unknown_label": ["--model", clf, "--text", "fine", "--label", "great"],
        "no_label": ["--model", clf, "--text", "fine"],
        "with_data": ["--model", clf, "--text", "fine", "--label", "neg", "--data", "sample"],
        "neither": ["--model", clf],
        "label_without_text": ["--model", ck, "--data", "sample", "--label", "neg"],
        "bad_aspect": ["--model", ck, "--text", "fine", "--aspect", "decor", "--label",
                       "none"],
    }[case]
    assert main(["importance", *args, "--out", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err
    assert {"empty": "The text is empty", "unknown_label": "is not one of clf's labels",
            "no_label": "--text needs --label", "with_data": "--text and --data do not go together",
            "neither": "Give --data", "label_without_text": "--label goes with --text",
            "bad_aspect": "Unknown aspect"}[case] in err
    assert not (tmp_path / "x.json").exists()
