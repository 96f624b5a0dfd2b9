"""``--ray`` on the attribution faithfulness, importance, no-op gradients and features train
commands:
validated while parsing (exit 2 and one line, before any work); ``noop --gradients`` writes
the library's gradient importance and refuses a model without a loss in one line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from analysis.cli import main


@pytest.fixture()
def corpus(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("The soup was cold.\nGreat staff.\tThe view too.\n", encoding="utf-8")
    return str(path)


def _args(command: str, corpus: str, out: str) -> list[str]:
    return {"attribution": ["attribution", "--faithfulness", "--data", corpus],
            "importance": ["importance", "--model", "example", "--data", corpus],
            "noop": ["noop", "--gradients", "--data", corpus],
            "features": ["features", "train", "--data", corpus]}[command] + ["--out", out]


@pytest.mark.parametrize("command", ["attribution", "importance", "noop", "features"])
@pytest.mark.parametrize("address", ["nowhere", "ray://host", "host:0"])
def test_a_bad_ray_address_is_exit_2_and_one_line(command, address, corpus, tmp_path, capsys):
    rc = main(_args(command, corpus, str(tmp_path / "o.json")) + ["--ray", address])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "\n" not in err
    assert err.startswith("error: --ray must be 'auto' or a Ray address HOST:PORT")
    assert not (tmp_path / "o.json").exists()


def test_ray_without_faithfulness_is_refused(tmp_path, capsys):
    # --ray's address is checked while parsing, Ray installed first (requirements-ray.txt)
    pytest.importorskip("ray", reason="the optional Ray extra (requirements-ray.txt) is absent")
    rc = main(["attribution", "--text", "good soup", "--out", str(tmp_path / "o.json"),
               "--ray", "127.0.0.1:6379"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and err == ("error: --ray goes with --faithfulness (one input is explained "
                               "here).")


def test_noop_gradients_without_a_loss_is_one_line(corpus, tiny_model_dir, tmp_path, capsys):
    bare = str(tiny_model_dir("bert"))  # an encoder without any loss head
    capsys.readouterr()  # what building it printed
    rc = main(["noop", "--gradients", "--data", corpus, "--model", bare,
               "--out", str(tmp_path / "o.json")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "\n" not in err and "no such task to score" in err
    assert not (tmp_path / "o.json").exists()


def test_noop_gradients_json_is_the_library_value(corpus, tmp_path_factory, tmp_path):
    from analysis.core.corpus import read_corpus
    from analysis.core.encoding import encode_dataset
    from analysis.noop import gradient_importance, loss_head
    from attribution_models import tiny_classifier_dir

    clf = str(tiny_classifier_dir(tmp_path_factory))  # a classifier: the task loss
    out = tmp_path / "o.json"
    assert main(["noop", "--gradients", "--data", corpus, "--model", clf, "--out",
                 str(out)]) == 0
    data = json.loads(out.read_text())
    head = loss_head(clf)
    encs = encode_dataset(head.tokenizer, read_corpus(corpus), 128).encodings
    ref = gradient_importance(head, encs, batch_size=8)
    got = data["gradient_importance"]
    assert got["loss"] == "task" and got["n_examples"] == 2 and data["n_examples"] == 2
    assert sorted(got["per_head"]) == sorted(ref.per_head)
    for cat, v in ref.per_head.items():
        np.testing.assert_allclose(got["per_head"][cat], v, rtol=0, atol=1e-12)
