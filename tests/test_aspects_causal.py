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


def test_the_mask_reaches_the_prediction(tiny_model_dir):
    """The check says how far each mask moved the predicted distributions: by hand from
    predict_probs with and without the mask, > 0 for the masked heads even when no metric
    changes; and a mask of no head moves nothing."""
    import numpy as np

    from analysis.aspects.finetune import predict_probs
    from analysis.models import load_model

    tiny = load_model(str(tiny_model_dir("bert")))
    clf = make_classifier(tiny, "qa_m", seed=2)
    ex = build_examples(load_sample().select(range(6)), "qa_m")
    ranked = [{"layer": 1, "head": 3}, {"layer": 0, "head": 0}]
    res = causal_check(clf, tiny.tokenizer, ex, "qa_m", ranked, 2, 2, 4, n_random=2)
    full = predict_probs(clf, tiny.tokenizer, ex)
    masked = predict_probs(clf, tiny.tokenizer, ex, head_mask=head_mask_for([(1, 3), (0, 0)],
                                                                             2, 4))
    assert not np.allclose(full, masked)  # the mask reaches the logits
    assert res["n_pairs"] == len(ex) == 6 * 5
    # QA-M: the pair's 5-way scores are its probabilities; TV = half the L1 distance
    assert res["moved_top_k"] == pytest.approx(0.5 * np.abs(full - masked).sum(1).mean())
    assert res["moved_top_k"] > 0
    assert res["flipped_top_k"] == int((full.argmax(1) != masked.argmax(1)).sum())
    assert len(res["delta_random_draws"]) == 2 and res["moved_random_k"] > 0


def test_causal_reading_says_within_noise_and_that_the_mask_reached():
    """Planted results: four zero changes read as 'within noise' with the numbers after the
    words; a real drop larger than every random draw reads as 'these heads matter'."""
    from analysis.aspects.reading import causal_reading

    zero = {"aspect_f1": 0.0, "acc_4way": 0.0, "acc_3way": 0.0, "acc_binary": 0.0}
    res = {"k": 3, "n_pairs": 165, "delta_top_k": zero, "delta_random_k": zero,
           "delta_random_draws": [zero, zero], "moved_top_k": 0.004, "flipped_top_k": 0,
           "flipped_random_k": 0.0}
    text = " ".join(causal_reading(res, "aspect terms"))
    assert "changed no answer of 165" in text and "0.4 points" in text
    assert text.count("within noise") == 2 and "+0.0 points" in text
    drop = dict(zero, aspect_f1=-12.5, acc_4way=-2.0)
    res = dict(res, delta_top_k=drop, delta_random_k=dict(zero, aspect_f1=-1.0, acc_4way=-2.5),
               delta_random_draws=[dict(zero, aspect_f1=-2.0, acc_4way=-5.0),
                                   dict(zero, aspect_f1=0.0, acc_4way=0.0)],
               flipped_top_k=9, moved_top_k=0.08)
    lines = causal_reading(res, "aspect terms")
    assert lines[0].startswith("Switching off the 3 heads that best track aspect terms changed "
                               "9 answers of 165")
    assert "these heads matter: switching them off costs 12.5 points" in lines[1]
    assert "within noise: -2.0 points" in lines[2] and "up to 5.0 points" in lines[2]
