"""The study (analysis.importance.run): the changes are the Aspect heads evaluation's metrics
with the head or layer masked minus the intact ones, the JSON has the issue's schema."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.aspects.causal import head_mask_for
from analysis.absa.finetune import evaluate
from analysis.core.errors import InputError
from analysis.importance import importance_study
from importance_util import tiny_absa, tiny_labelled


def test_changes_are_the_evaluation_with_the_head_or_layer_masked():
    loaded, card, ev = tiny_absa(sentences=6)
    r = importance_study(loaded, ev, method="mask", metric="acc_4way", n_boot=200)
    ex, tok = ev.scorer.examples, loaded.tokenizer
    full = evaluate(loaded.model, tok, ex, "qa_m")
    for key in ("aspect_f1", "acc_4way"):
        assert r.intact[key] == pytest.approx(full[key])
    head = evaluate(loaded.model, tok, ex, "qa_m", head_mask=head_mask_for([(1, 3)], 2, 4))
    layer = evaluate(loaded.model, tok, ex, "qa_m",
                     head_mask=head_mask_for([(0, h) for h in range(4)], 2, 4))
    for key in ("aspect_f1", "acc_4way"):
        assert r.heads[key][1, 3] == pytest.approx(head[key] - full[key], abs=1e-9)
        assert r.layers[key][0] == pytest.approx(layer[key] - full[key], abs=1e-9)
    assert r.heads_ci["loss"].shape == (2, 4, 2) and r.layers_ci["loss"].shape == (2, 2)
    lo, hi = r.heads_ci["loss"][..., 0], r.heads_ci["loss"][..., 1]
    assert np.all(lo <= hi)
    assert r.gradient.shape == (2, 4) and np.allclose((r.gradient ** 2).sum(1), 1)
    assert r.pruning is None and r.to_json()["pruning"] is None
    with pytest.raises(InputError):
        importance_study(loaded, ev, metric="accuracy")


def test_json_schema_and_pruning(tmp_path):
    loaded, ev = tiny_labelled(tmp_path)
    r = importance_study(loaded, ev, prune=True, n_boot=100, random_seeds=(0, 1))
    j = r.to_json()
    assert list(j) == ["metric", "intact", "heads", "heads_ci", "layers",
                       "gradient_importance", "spearman", "pruning"]
    assert j["metric"] == "accuracy" and np.shape(j["heads"]) == (2, 4)
    assert np.shape(j["heads_ci"]) == (2, 4, 2) and np.shape(j["layers"]) == (2,)
    p = j["pruning"]
    assert p["fractions"] == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
    assert p["by_importance"][0] == j["intact"] == p["random_mean"][0] == p["by_gradient"][0]
    rand = r.pruning["random"]
    assert rand.shape == (2, 10) and np.allclose(p["random_mean"], rand.mean(0))
    # heads scored by measured change: the most harmless head goes first
    first = r.pruning["orders"]["by_importance"][0]
    assert r.heads["accuracy"].flat[first] == r.heads["accuracy"].max()
    drops = -r.heads["accuracy"]
    assert j["spearman"] is None or -1 <= j["spearman"] <= 1
    assert r.drops().tolist() == drops.tolist()
