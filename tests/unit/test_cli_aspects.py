"""The ``aspects`` commands (``finetune``, ``evaluate``, ``heads``) and their old top-level
names ``finetune``, ``evaluate``, ``aspect-heads``."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from analysis.absa import pipeline
from analysis.absa.checkpoints import CARD_NAME, load_checkpoint
from analysis.absa.finetune import evaluate
from analysis.aspects.gold import KINDS
from analysis.absa.readers import load_sample
from analysis.absa.tasks import build_examples


def test_cli_finetune_with_heldout_records_the_curve(tiny_model_dir, tmp_path, capsys):
    from analysis.cli import main

    out = tmp_path / "ck"
    rc = main(["finetune", "--data", "sample", "--task", "nli_m", "--model",
               str(tiny_model_dir("bert")), "--epochs", "2", "--heldout", "0.2",
               "--out", str(out)])
    assert rc == 0
    printed = capsys.readouterr()
    text = (out / CARD_NAME).read_text()
    card = json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in the card"))
    assert [c["epoch"] for c in card["curve"]] == [1, 2]
    assert card["curve"][-1]["aspect_f1"] == pytest.approx(card["metrics"]["aspect_f1"])
    assert "held-out after epoch 2: aspect F1" in printed.out + printed.err
    # the last point is what the checkpoint scores on the card's held-out sentences
    loaded, _ = load_checkpoint(out, task="nli_m")
    held = load_sample().filter(lambda r: r["id"] in set(card["heldout_ids"]))
    ref = evaluate(loaded.model, loaded.tokenizer, build_examples(held, "nli_m"), "nli_m")
    assert card["curve"][-1]["acc_4way"] == pytest.approx(ref["acc_4way"], abs=1e-9)


def test_cli_finetune_evaluate(tiny_model_dir, tmp_path, capsys):
    from analysis.cli import main

    out = tmp_path / "ck"
    rc = main(["finetune", "--data", "sample", "--task", "qa_m", "--model",
               str(tiny_model_dir("bert")), "--epochs", "0.05", "--out", str(out)])
    assert rc == 0 and (out / CARD_NAME).is_file()
    res = tmp_path / "m.json"
    rc = main(["evaluate", "--model", str(out), "--data", "sample", "--task", "qa_m",
               "--out", str(res)])
    assert rc == 0
    m = json.loads(res.read_text())
    loaded, card = load_checkpoint(out, task="qa_m")
    ref = evaluate(loaded.model, loaded.tokenizer,
                     build_examples(load_sample(), "qa_m", card["pair_order"]), "qa_m")
    for key in ("aspect_precision", "aspect_recall", "aspect_f1", "acc_4way", "acc_3way",
                "acc_binary"):
        assert 0.0 <= m[key] <= 100.0
        assert m[key] == pytest.approx(ref[key], abs=1e-9)  # the library's numbers
    capsys.readouterr()
    assert main(["evaluate", "--model", str(out), "--data", "sample", "--task", "nli_b",
                 "--out", str(res)]) == 2
    assert "fine-tuned for QA-M, not NLI-B" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('{"sentences": [{"text": "x", "categories": [{"category": "parking", '
                   '"polarity": "positive"}]}]}')
    assert main(["finetune", "--data", str(bad), "--task", "qa_m", "--out",
                 str(tmp_path / "z")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: Sentence 0: unknown category 'parking'") and "\n" not in err
    assert not (tmp_path / "z").exists()


def test_cli_refuses_a_bad_out_folder_before_training(tmp_path, capsys, monkeypatch):
    from analysis.cli import main

    def no_training(*a, **k):
        raise AssertionError("trained although --out is unusable")

    monkeypatch.setattr(pipeline, "fine_tune", no_training)
    taken = tmp_path / "notes"
    taken.mkdir()
    (taken / "mine.txt").write_text("keep me")
    assert main(["finetune", "--data", "sample", "--task", "qa_m", "--out", str(taken)]) == 2
    err = capsys.readouterr().err.strip()
    assert "exists and is not an ABSA checkpoint" in err and "\n" not in err
    assert (taken / "mine.txt").read_text() == "keep me"


def test_cli_aspect_heads_refuses_another_task_than_the_checkpoints(tmp_path, capsys,
                                                                    tiny_checkpoint):
    from analysis.cli import main

    ck = tiny_checkpoint  # QA-M
    rc = main(["aspect-heads", "--model", str(ck), "--data", "sample", "--task", "qa_b",
               "--causal", "--out", str(tmp_path / "h.json")])
    assert rc == 2
    assert "fine-tuned for QA-M, not QA-B" in capsys.readouterr().err
    assert not (tmp_path / "h.json").exists()


def test_cli_json_has_null_for_undefined_metrics(tmp_path):
    from analysis.cli.aspects import _write

    out = tmp_path / "m.json"
    _write(out, {"acc_binary": float("nan"), "acc_4way": np.float64(50.0), "x": [np.inf, 1]})
    assert json.loads(out.read_text()) == {"acc_binary": None, "acc_4way": 50.0,
                                          "x": [None, 1]}
    assert "NaN" not in out.read_text()


def test_cli_aspect_heads(tmp_path, capsys, tiny_checkpoint):
    from analysis.cli import main

    ck = tiny_checkpoint
    out = tmp_path / "heads.json"
    rc = main(["aspect-heads", "--model", str(ck), "--data", "sample", "--max-sentences", "6",
               "--top-k", "3", "--out", str(out)])
    assert rc == 0
    data = json.loads(out.read_text())
    kinds = [h["kind"] for h in data["heads"]]
    assert kinds.count("aspect") == 3 and kinds.count("noop") == 3
    assert all(0 <= h["layer"] < 2 and 0 <= h["head"] < 4 for h in data["heads"])
    assert all(h["ci_low"] <= h["score"] + 1e-9 <= h["ci_high"] + 2e-9 for h in data["heads"])
    assert set(data["baselines"]) == set(KINDS)
    capsys.readouterr()
    assert main(["aspect-heads", "--model", str(ck), "--data", "sample", "--out",
                 str(tmp_path / "x.txt")]) == 2
    assert capsys.readouterr().err.strip() == "error: --out must name a .json file."


def test_aspects_subcommands_write_what_the_old_names_write(tmp_path, capsys, tiny_checkpoint):
    """``aspects evaluate`` / ``aspects heads`` are the old ``evaluate`` / ``aspect-heads``:
    the same options, the same JSON (the run time aside)."""
    from analysis.cli import main

    ck = tiny_checkpoint
    runs = {
        "evaluate": (["evaluate"], ["aspects", "evaluate"],
                     ["--model", str(ck), "--data", "sample", "--task", "qa_m"]),
        "heads": (["aspect-heads"], ["aspects", "heads"],
                  ["--model", str(ck), "--data", "sample", "--max-sentences", "4", "--top-k",
                   "2", "--causal"]),
    }
    for name, (old, new, opts) in runs.items():
        outs = []
        for i, cmd in enumerate((old, new)):
            out = tmp_path / f"{name}{i}.json"
            assert main(cmd + opts + ["--out", str(out)]) == 0
            data = json.loads(out.read_text())
            data.pop("seconds", None)
            outs.append(data)
        assert outs[0] == outs[1]
    # the causal check's noise in the JSON: the change's interval and the random draws' band
    for res in outs[0]["causal"].values():
        for key in ("aspect_f1", "acc_4way"):
            draws = [d[key] for d in res["delta_random_draws"]]
            assert res["random_band"][key] == [min(draws), max(draws)]
            low, high = res["ci_top_k"][key]
            assert low <= res["delta_top_k"][key] + 1e-9 <= high + 2e-9
    assert main(["aspects", "heads", "--model", str(ck), "--data", "sample", "--out",
                 str(tmp_path / "x.txt")]) == 2
    assert "--out must name a .json file" in capsys.readouterr().err


def test_cli_finetune_says_when_the_model_gives_one_label_to_everything(tiny_model_dir,
                                                                         tmp_path, capsys):
    """A tiny model after a few steps gives one label to every held-out pair (here
    'negative'): the command prints a hint saying what that means and what to try."""
    from analysis.cli import main

    out = tmp_path / "ck"
    rc = main(["aspects", "finetune", "--data", "sample", "--task", "nli_m", "--model",
               str(tiny_model_dir("bert")), "--epochs", "0.1", "--heldout", "0.2",
               "--out", str(out)])
    assert rc == 0
    printed = capsys.readouterr().out
    card = json.loads((out / CARD_NAME).read_text())
    assert card["metrics"]["top_label_share"] == 100.0
    assert re.search(r"top_label_share: 100\.00\n", printed), printed
    assert f"hint: The model answers '{card['metrics']['top_label']}'" in printed \
        or "hint: The model gives every pair the same label" in printed
    assert "--epochs 10" in printed
