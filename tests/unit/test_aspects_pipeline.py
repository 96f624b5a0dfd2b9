"""The one fine-tuning pipeline (page, CLI, benchmark): fine-tune -> held-out curve -> card ->
checkpoint."""

from __future__ import annotations

import json

import pytest

from analysis.absa import pipeline
from analysis.absa.checkpoints import CARD_NAME
from analysis.absa.data import split_dataset
from analysis.absa.readers import load_sample
from analysis.core.errors import InputError


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    from analysis.core.models import load_model

    return load_model(str(tiny_model_dir("bert")))


def test_curve_metrics_card_and_checkpoint(tiny, tmp_path):
    train, test = split_dataset(load_sample().select(range(10)), 0.2, seed=0)
    said, points = [], []
    run = pipeline.run_fine_tune(tiny, train, test, "nli_m", data="sample[:10]", epochs=2,
                                 batch_size=8, lr=1e-3, out=tmp_path / "ck", status=said.append,
                                 on_curve=lambda k, m: points.append(k))
    card = run.card
    assert [c["epoch"] for c in card["curve"]] == [1, 2] and points == [1, 2]
    assert {k: v for k, v in card["curve"][-1].items() if k != "epoch"} == card["metrics"]
    assert said == ["Evaluating on the held-out sentences after epoch 1...",
                    "Evaluating on the held-out sentences after epoch 2...",
                    "Evaluating on the held-out sentences..."]
    assert card["heldout_ids"] == list(test["id"]) and card["base_model"] == tiny.spec
    assert card["pair_order"] == "review-aux" and card["data"] == "sample[:10]"
    assert len(run.eval_examples) == 5 * len(test) and run.result.n_examples == 5 * len(train)
    assert run.folder == (tmp_path / "ck").resolve()
    saved = json.loads((run.folder / CARD_NAME).read_text())
    assert saved["curve"] == json.loads(json.dumps(card["curve"]).replace("NaN", "null"))


def test_without_held_out_data_there_is_no_curve(tiny):
    run = pipeline.run_fine_tune(tiny, load_sample().select(range(2)), None, "qa_m", data="s",
                                 epochs=1, batch_size=8, max_steps=1)
    assert run.card["metrics"] == {} and run.card["curve"] == [] and run.card["heldout_ids"] == []
    assert run.eval_examples is None and run.folder is None


def test_an_unusable_folder_is_refused_before_training(tiny, tmp_path, monkeypatch):
    def no_training(*a, **k):
        raise AssertionError("trained although the folder is unusable")

    monkeypatch.setattr(pipeline, "fine_tune", no_training)
    (tmp_path / "mine.txt").write_text("keep me")
    with pytest.raises(InputError, match="is not an ABSA checkpoint"):
        pipeline.run_fine_tune(tiny, load_sample().select(range(2)), None, "qa_m", data="s",
                               out=tmp_path)
