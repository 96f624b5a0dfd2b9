"""The causal check: the top-k ranked heads masked against the full model."""

from __future__ import annotations

import pytest

from analysis.aspects.causal import causal_check, head_mask_for
from analysis.aspects.finetune import evaluate, make_classifier
from analysis.aspects.readers import load_sample
from analysis.aspects.tasks import build_examples


def test_causal_check_masks_the_ranked_heads(tiny_model_dir):
    from analysis.models import load_model

    tiny = load_model(str(tiny_model_dir("bert")))
    clf = make_classifier(tiny, "qa_m", seed=2)
    ex = build_examples(load_sample().select(range(6)), "qa_m")
    ranked = [{"layer": 1, "head": 3}, {"layer": 0, "head": 0}]
    res = causal_check(clf, tiny.tokenizer, ex, "qa_m", ranked, 2, 2, 4, n_random=2)
    full = evaluate(clf, tiny.tokenizer, ex, "qa_m")
    masked = evaluate(clf, tiny.tokenizer, ex, "qa_m",
                        head_mask=head_mask_for([(1, 3), (0, 0)], 2, 4))
    assert res["masked_heads"] == [(1, 3), (0, 0)]
    for key in ("aspect_f1", "acc_4way"):
        assert res["full"][key] == pytest.approx(full[key])
        assert res["top_k"][key] == pytest.approx(masked[key])
        assert res["delta_top_k"][key] == pytest.approx(masked[key] - full[key])
    m = head_mask_for([(1, 3)], 2, 4)
    assert m.sum() == 7 and m[1, 3] == 0
