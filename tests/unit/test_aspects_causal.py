"""The causal check: the top-k ranked heads masked against the full model."""

from __future__ import annotations

import pytest

from analysis.aspects.causal import causal_check, head_mask_for
from analysis.absa.finetune import evaluate, make_classifier
from analysis.absa.readers import load_sample
from analysis.absa.tasks import build_examples


def test_causal_check_masks_the_ranked_heads(tiny_model_dir):
    from analysis.core.models import load_model

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

    from analysis.absa.finetune import predict_probs
    from analysis.core.models import load_model

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


def test_sentence_counts_add_up_to_the_metrics_and_the_interval_is_paired():
    """Planted 5-way scores: the per-sentence counts summed give metrics_from_scores' values;
    a mask that changes nothing has the interval [0, 0]; one that answers 'none' for every
    pair of sentences with a gold aspect loses all of aspect F1, so the whole interval lies
    below zero and holds the observed change."""
    import numpy as np

    from analysis.aspects.causal import metrics_of, paired_interval, sentence_counts
    from analysis.absa.tasks import NONE, metrics_from_scores

    rng = np.random.default_rng(3)
    gold = rng.integers(0, 5, size=40)
    scores = rng.random((40, 5))
    ref = metrics_from_scores(gold, scores)
    summed = metrics_of(sentence_counts(gold, scores).sum(0))
    for key in ("aspect_f1", "acc_4way", "acc_3way", "acc_binary"):
        assert float(summed[key]) == pytest.approx(ref[key])
    same = paired_interval(gold, scores, scores, n_boot=200)
    assert same["aspect_f1"] == [0.0, 0.0] and same["acc_4way"] == [0.0, 0.0]
    none = scores.copy()
    none[:, NONE] = 10.0
    change = metrics_from_scores(gold, none)["aspect_f1"] - ref["aspect_f1"]
    assert change == pytest.approx(-ref["aspect_f1"]) and change < -30
    low, high = paired_interval(gold, scores, none, n_boot=500)["aspect_f1"]
    assert low <= change <= high < 0


def test_causal_check_gives_the_change_an_interval_and_the_random_band(tiny_model_dir):
    import numpy as np

    from analysis.core.models import load_model

    tiny = load_model(str(tiny_model_dir("bert")))
    clf = make_classifier(tiny, "qa_m", seed=2)
    ex = build_examples(load_sample().select(range(6)), "qa_m")
    ranked = [{"layer": 1, "head": 3}, {"layer": 0, "head": 0}]
    res = causal_check(clf, tiny.tokenizer, ex, "qa_m", ranked, 2, 2, 4, n_random=2)
    for key in ("aspect_f1", "acc_4way"):
        low, high = res["ci_top_k"][key]
        assert low <= res["delta_top_k"][key] + 1e-9 and res["delta_top_k"][key] <= high + 1e-9
        draws = [d[key] for d in res["delta_random_draws"]]
        assert res["random_band"][key] == [min(draws), max(draws)]
    assert np.isfinite(res["ci_top_k"]["aspect_f1"]).all()


def _planted(delta, ci, band):
    zero = {"aspect_f1": 0.0, "acc_4way": 0.0, "acc_3way": 0.0, "acc_binary": 0.0}
    return {"k": 3, "n_pairs": 165, "delta_top_k": dict(zero, aspect_f1=delta, acc_4way=0.0),
            "delta_random_k": dict(zero, aspect_f1=sum(band) / 2),
            "delta_random_draws": [dict(zero, aspect_f1=b) for b in band],
            "random_band": {"aspect_f1": list(band), "acc_4way": [0.0, 0.0]},
            "ci_top_k": {"aspect_f1": list(ci), "acc_4way": [0.0, 0.0]},
            "moved_top_k": 0.05, "flipped_top_k": 4, "flipped_random_k": 1.0}


def test_causal_reading_states_the_interval_and_says_within_noise():
    """The issue's case: a cost of 4.4 points whose interval covers 0 is within noise (said
    with the interval and the random band); one whose interval overlaps the random band is too;
    one clear of both says the heads matter, with its interval. Every reading ends by saying
    what the check measures against the ranking and the Head importance page."""
    from analysis.aspects.reading import causal_reading, within_noise

    res = _planted(-4.4, (-9.1, 0.6), (-1.2, 0.0))
    assert within_noise(res, "aspect_f1")
    lines = causal_reading(res, "aspect terms")
    assert lines[1] == ("For finding the aspects (F1), the change is within noise: -4.4 points "
                        "with these heads off (95% interval -9.1 to +0.6), against -1.2 to "
                        "+0.0 points in 2 draws with 3 random heads.")
    assert "these heads matter" not in " ".join(lines)
    res = _planted(-4.4, (-7.0, -2.0), (-3.0, -0.5))  # overlaps the random heads' band
    assert within_noise(res, "aspect_f1")
    assert "within noise: -4.4 points" in causal_reading(res, "aspect terms")[1]
    res = _planted(-12.5, (-18.0, -7.0), (-3.0, -0.5))
    assert not within_noise(res, "aspect_f1")
    lines = causal_reading(res, "aspect terms")
    assert lines[1] == ("For finding the aspects (F1), these heads matter: switching them off "
                        "costs 12.5 points (95% interval -18.0 to -7.0), more than 3 random "
                        "heads do (-3.0 to -0.5 points in 2 draws).")
    assert lines[2].startswith("For the 4-way sentiment accuracy, the change is within noise")
    last = lines[-1]
    assert last.startswith("This check asks whether the model's answers need these 3 heads "
                           "together, which is not what the ranking above measures")
    assert "where it looks" in last and "The Head importance page switches off one head at a " \
        "time" in last
