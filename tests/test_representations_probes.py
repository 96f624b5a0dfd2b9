"""analysis.representations.probes: 100% on separable planted vectors, the majority rate on
noise, the majority baseline by hand, sentence-grouped folds."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.errors import DataError
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
    assert curve.to_json() == {"layers": curve.layers, "majority": curve.majority}


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
