"""The predictions study's metrics: hand-computed values, scikit-learn's macro F1, the ABSA
paper's metrics as analysis.absa.tasks computes them, slices as sums of rows, paired
intervals, flip rates, the slices themselves and the plain reading."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.absa.tasks import NONE, metrics_from_scores
from analysis.predictions.metrics import (Resamples, confusion, metric_names, rates,
                                          row_counts, slice_changes, slice_metrics)
from analysis.predictions.slices import length_bins, slices


def _scores(pred, c):
    s = np.full((len(pred), c), 0.1)
    s[np.arange(len(pred)), pred] = 0.8
    return s


def _one(counts, units, mask, c, absa, n_boot=1000):
    return slice_metrics(counts, Resamples(units, n_boot), {"s": mask}, c, absa)["s"]


def test_accuracy_macro_f1_and_loss_by_hand_and_as_scikit_learn():
    from sklearn.metrics import f1_score

    gold = np.array([0, 0, 1, 1, 2, 2, 2])
    pred = np.array([0, 1, 1, 1, 2, 0, 0])
    losses = np.arange(7, dtype=float)
    counts = row_counts(gold, _scores(pred, 4), losses, absa=False)
    m = _one(counts, np.arange(7), np.ones(7, bool), 4, False, n_boot=200)
    # right: rows 0, 2, 3, 4 -> 4 / 7
    assert m["accuracy"]["value"] == pytest.approx(400 / 7)
    # per class F1: 0: tp 1, pred 3, gold 2 -> 0.4; 1: tp 2, pred 3, gold 2 -> 0.8;
    # 2: tp 1, pred 1, gold 3 -> 0.5; class 3 never occurs: left out -> mean 1.7 / 3
    assert m["macro_f1"]["value"] == pytest.approx(100 * 1.7 / 3)
    assert m["macro_f1"]["value"] == pytest.approx(100 * f1_score(gold, pred, average="macro"))
    assert m["loss"]["value"] == pytest.approx(3.0)
    for k in ("accuracy", "macro_f1", "loss"):
        assert m[k]["low"] <= m[k]["value"] <= m[k]["high"] and m[k]["n"] == 7


def test_absa_metrics_are_the_papers_and_slices_add_up():
    """Planted 5-way scores for 12 sentences x 5 categories: the whole set gives
    metrics_from_scores' aspect F1, 4-way and 3-way accuracy; a category slice is measured
    from that category's pairs only (4-way: right of its gold aspects)."""
    rng = np.random.default_rng(0)
    gold = rng.integers(0, 5, size=60)
    scores = rng.random((60, 5))
    units = np.repeat(np.arange(12), 5)
    counts = row_counts(gold, scores, np.zeros(60), absa=True)
    m = _one(counts, units, np.ones(60, bool), 5, True, n_boot=300)
    ref = metrics_from_scores(gold, scores)
    for k in ("aspect_f1", "acc_4way", "acc_3way"):
        assert m[k]["value"] == pytest.approx(ref[k]), k
        assert m[k]["low"] <= m[k]["value"] <= m[k]["high"]
    assert m["accuracy"]["value"] == pytest.approx(100 * np.mean(scores.argmax(1) == gold))
    assert metric_names(True) == ("accuracy", "macro_f1", "aspect_f1", "acc_4way", "acc_3way",
                                  "loss")
    food = np.tile(np.arange(5) == 2, 12)
    got = _one(counts, units, food, 5, True, n_boot=50)
    pred = scores.argmax(1)
    keep = food & (gold != NONE)
    p4 = np.where(pred == NONE, scores[:, :4].argmax(1), pred)
    assert got["acc_4way"]["value"] == pytest.approx(100 * np.mean(p4[keep] == gold[keep]))
    assert got["accuracy"]["n"] == 12


def test_an_empty_slice_is_nan_and_an_interval_resamples_units():
    counts = row_counts([0, 1], _scores([0, 0], 2), [0.5, 0.5], absa=False)
    empty = _one(counts, np.arange(2), np.zeros(2, bool), 2, False)
    assert math.isnan(empty["accuracy"]["value"]) and empty["accuracy"]["n"] == 0
    # two rows in one unit: every resample draws both, so the interval is the value itself
    one = _one(counts, np.zeros(2, int), np.ones(2, bool), 2, False, n_boot=100)
    assert one["accuracy"]["low"] == one["accuracy"]["high"] == 50.0
    # a slice's value in a resample is its rows' in that resample: one set of resamples for
    # every slice, and a slice of the whole set equals the whole set
    units = np.repeat(np.arange(6), 2)
    counts = row_counts(np.tile([0, 1], 6), _scores(np.arange(12) % 3 % 2, 2), np.ones(12),
                        absa=False)
    boot = Resamples(units, 400)
    both = slice_metrics(counts, boot, {"a": np.ones(12, bool), "b": np.ones(12, bool),
                                        "half": units < 3}, 2, False)
    assert both["a"] == both["b"] and both["half"]["accuracy"]["n"] == 6
    w = boot.weights[:, :3]  # the half's units' draws; resamples without any are left out
    right = (np.arange(12) % 3 % 2 == np.tile([0, 1], 6)).reshape(6, 2).sum(1)[:3]
    drawn = w.sum(1) > 0
    ref = 100 * (w[drawn] @ right) / (2 * w[drawn].sum(1))
    assert both["half"]["accuracy"]["low"] == pytest.approx(np.quantile(ref, 0.025))


def test_paired_change_of_two_models():
    gold = np.array([0, 1, 0, 1, 0, 1, 0, 1])
    a = row_counts(gold, _scores(1 - gold, 2), np.ones(8), False)  # all wrong
    b = row_counts(gold, _scores(gold, 2), np.ones(8), False)  # all right
    boot, every = Resamples(np.arange(8), 500), {"all": np.ones(8, bool)}
    ch = slice_changes(a, b, boot, every, 2, False)["all"]
    assert ch["accuracy"] == {"a": 0.0, "b": 100.0, "change": 100.0, "low": 100.0,
                              "high": 100.0, "n": 8}
    same = slice_changes(a, a, boot, every, 2, False)["all"]
    assert same["macro_f1"]["change"] == 0.0
    assert same["macro_f1"]["low"] == same["macro_f1"]["high"] == 0.0
    half = row_counts(gold, _scores(np.array([0, 1, 0, 1, 1, 0, 1, 0]), 2), np.ones(8), False)
    ch = slice_changes(a, half, boot, every, 2, False)["all"]
    assert ch["accuracy"]["change"] == 50.0
    assert ch["accuracy"]["low"] < 50.0 < ch["accuracy"]["high"]


def test_flip_rate_and_confusion():
    hits = np.array([1, 0, 1, 1, 0, 0], bool)
    has = np.array([1, 1, 1, 1, 1, 0], bool)
    r = rates(hits, has, Resamples(np.arange(6), 300), {"all": np.ones(6, bool)})["all"]
    assert r["value"] == pytest.approx(60.0) and r["n"] == 5
    assert 0.0 <= r["low"] <= 60.0 <= r["high"] <= 100.0
    assert confusion([0, 0, 1, 2], [0, 1, 1, 1], 3).tolist() == [[1, 1, 0], [0, 1, 0],
                                                                 [0, 1, 0]]


def test_slices_cover_labels_aspects_and_length_thirds():
    idx, names = length_bins([5, 5, 6, 7, 8, 9, 10, 20, 30])
    assert idx.tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert names == ["5-6 tokens", "7-9 tokens", "10-30 tokens"]
    assert length_bins([4, 4, 4])[1] == ["4 tokens"]
    cuts = slices([0, 2, 2, 0], ("neg", "neu", "pos"), [3, 4, 5, 6], ["food", "price", "food",
                                                                        "price"])
    assert list(cuts) == ["all", "label:neg", "label:pos", "aspect:food", "aspect:price",
                          "length:short", "length:medium", "length:long"]
    assert cuts["aspect:food"][1].tolist() == [True, False, True, False]
    assert cuts["label:pos"][0] == "gold label pos"
