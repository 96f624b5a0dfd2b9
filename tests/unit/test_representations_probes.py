"""analysis.representations.probes: 100% on separable planted vectors, the majority rate on
noise, the majority baseline by hand, sentence-grouped folds."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.core.errors import DataError
from analysis.representations.probes import _folds, majority_accuracy, probe_layers


def test_separable_vectors_reach_100_and_noise_the_majority_rate():
    rng = np.random.default_rng(0)
    n = 300
    labels = np.array(["NOUN"] * 180 + ["VERB"] * 90 + ["ADJ"] * 30)
    groups = np.arange(n) // 6  # 50 sentences of 6 words
    centres = {"NOUN": 0, "VERB": 1, "ADJ": 2}
    separable = rng.normal(size=(n, 16)) * 0.1
    for i, lab in enumerate(labels):
        separable[i, centres[lab]] += 5.0
    noise = rng.normal(size=(n, 16))
    curve = probe_layers([separable, noise], labels, groups, name="upos")
    assert curve.layers[0] == 1.0
    assert curve.majority == pytest.approx(0.6, abs=0.05)
    # noise: no better than guessing the most frequent class (within a few words)
    assert curve.layers[1] <= curve.majority + 0.04
    assert curve.layers[1] >= curve.majority - 0.15
    assert curve.recall[0] == {"ADJ": 1.0, "NOUN": 1.0, "VERB": 1.0}
    assert curve.counts == {"ADJ": 30, "NOUN": 180, "VERB": 90}
    assert curve.best_layer() == 0 and curve.folds == 5 and curve.n_sentences == 50
    assert curve.to_json() == {"layers": curve.layers, "majority": curve.majority,
                               "layers_ci": [list(curve.ci(k)) for k in range(2)]}
    # the per-sentence counts add up to the accuracies the curve reports
    assert curve.sentence_words == [6] * 50 and len(curve.sentence_right) == 2
    for k in range(2):
        assert sum(curve.sentence_right[k]) / n == pytest.approx(curve.layers[k])
    assert sum(curve.majority_right) / n == pytest.approx(curve.majority)
    assert curve.ci(0) == (1.0, 1.0)  # every word right in every resample
    low, high = curve.ci(1)
    assert low <= curve.layers[1] <= high and high - low > 0.02


def test_layers_side_by_side_equal_one_at_a_time(monkeypatch):
    """probe_layers fits its layers on fit_workers() threads, each on one torch thread: the
    accuracies, every word's prediction and the per-sentence counts are those of one layer at
    a time; a stop (progress raising) drops the layers not started."""
    from analysis.representations import probes as mod

    rng = np.random.default_rng(1)
    n = 240
    labels = np.array(["NOUN", "VERB", "ADJ", "DET"])[rng.integers(0, 4, n)]
    groups = np.arange(n) // 8
    layers = [rng.normal(size=(n, 12)) + (k / 2) * (labels[:, None] == "NOUN")
              for k in range(4)]
    monkeypatch.setattr(mod, "fit_workers", lambda: 2)
    together = probe_layers(layers, labels, groups)
    monkeypatch.setattr(mod, "fit_workers", lambda: 1)
    alone = probe_layers(layers, labels, groups)
    assert together.layers == alone.layers and together.recall == alone.recall
    assert together.sentence_right == alone.sentence_right
    assert together.layers[3] > together.layers[0]  # the planted signal grows with k
    splits, _ = _folds(groups, 5)
    classes = np.unique(labels)
    y = np.searchsorted(classes, labels)
    assert together.layers == [
        float((classes[mod.layer_predictions(x.astype(np.float32), y, splits, 4)] == labels)
              .mean()) for x in layers]  # each layer's own folds, in order

    fits = []
    real = mod.layer_predictions
    monkeypatch.setattr(mod, "layer_predictions", lambda *a: fits.append(1) or real(*a))

    def stop(done, total):
        raise RuntimeError("stopped")

    with pytest.raises(RuntimeError, match="stopped"):
        probe_layers(layers, labels, groups, progress=stop)
    # the first layer and at most one more (one worker: two ahead of the caller), not all four,
    # however late the caller takes the first result
    assert 1 <= len(fits) <= 2


def test_majority_baseline_by_hand():
    labels = np.array(list("aabbb") + list("aaab"))
    splits = [(np.arange(5, 9), np.arange(5)), (np.arange(5), np.arange(5, 9))]
    # fold 1 trains on "aaab" -> predicts a: 2 of 5 right; fold 2 trains on "aabbb" -> b: 1/4
    assert majority_accuracy(labels, splits) == pytest.approx(3 / 9)


def test_folds_keep_each_sentence_on_one_side():
    groups = np.repeat(np.arange(7), 3)
    splits, k = _folds(groups, 5)
    assert k == 5
    for train, test in splits:
        assert not set(groups[train]) & set(groups[test])


def test_bad_inputs_one_line():
    x = [np.zeros((4, 2))]
    with pytest.raises(DataError, match="two classes"):
        probe_layers(x, ["a"] * 4, [0, 0, 1, 1])
    with pytest.raises(DataError, match="at least two sentences"):
        probe_layers(x, ["a", "b", "a", "b"], [0, 0, 0, 0])


def test_paired_intervals_of_planted_counts():
    """20 sentences of 10 words: the same right words give [0, 0]; one more right word in
    every sentence is +10 points in every resample; the change's interval holds the observed
    change and a one-sided lead over the baseline lies above 0."""
    from analysis.representations.probes import ProbeCurve, change_ci, lead_ci, paired_ci

    words = [10] * 20
    right = [7, 8, 9, 6, 7] * 4
    assert paired_ci(words, right, right) == (0.0, 0.0)
    low, high = paired_ci(words, right, [r + 1 for r in right])
    assert low == pytest.approx(0.1) and high == pytest.approx(0.1)
    churn = [r + d for r, d in zip(right, [1, -1, 2, -2, 0] * 4)]  # 0 net change
    low, high = paired_ci(words, right, churn)
    assert low < 0 < high
    a = ProbeCurve("aspect", [0.5, 0.74], 0.5, ["a", "b"], {}, n_words=200,
                   sentence_words=words, sentence_right=[[5] * 20, right],
                   majority_right=[5] * 20)
    b = ProbeCurve("aspect", [0.5, 0.74], 0.5, ["a", "b"], {}, n_words=200,
                   sentence_words=words, sentence_right=[[5] * 20, churn],
                   majority_right=[5] * 20)
    assert change_ci(a, b, 1) == paired_ci(words, right, churn)
    assert 0.15 < lead_ci(a, 1)[0] < 0.24 <= lead_ci(a, 1)[1]
    assert ProbeCurve("x", [0.5], 0.5, ["a", "b"], {}).ci(0) is None
