"""Metrics as per-unit counts and the paired bootstrap (analysis.importance.scoring)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from analysis.absa.readers import load_sample
from analysis.absa.tasks import build_examples, metrics_from_scores, pair_scores
from analysis.importance.scoring import (AbsaScorer, AccuracyScorer, example_losses, paired_ci,
                                         ratio, resample_weights, unit_counts)


@pytest.mark.parametrize("task", ["qa_m", "nli_b"])
def test_counts_reproduce_the_aspects_metrics(task):
    ex = build_examples(load_sample().select(range(12)), task)
    rng = np.random.default_rng(3)
    n_labels = 2 if task.endswith("_b") else 5
    scorer = AbsaScorer(ex, task)
    units = np.array([e.sentence for e in ex])
    for _ in range(5):
        probs = rng.dirichlet(np.ones(n_labels) * 0.5, size=len(ex))
        ref = metrics_from_scores(*pair_scores(ex, probs, task))
        counts = unit_counts(scorer, probs, np.zeros(len(ex)), units, 12)
        for key in ("aspect_f1", "acc_4way"):
            num, den, empty = counts[key]
            assert len(num) == 12
            assert float(ratio(num.sum(), den.sum(), empty)) == pytest.approx(ref[key], abs=1e-9)
            assert scorer.point(probs)[key] == ref[key]


def test_accuracy_and_losses():
    labels = np.array([0, 1, 2, 1])
    logits = np.array([[2.0, 0, 0], [0, 1, 3], [0, 0, 1], [1, 2, 0]])
    sc = AccuracyScorer(labels)
    assert sc.point(logits)["accuracy"] == 75.0
    ref = torch.nn.functional.cross_entropy(torch.tensor(logits), torch.tensor(labels),
                                            reduction="none").numpy()
    assert np.allclose(example_losses(logits, labels), ref)
    stacked = example_losses(np.stack([logits, logits * 2]), labels)
    assert stacked.shape == (2, 4) and np.allclose(stacked[0], ref)
    c = unit_counts(sc, logits, ref, np.arange(4), 4)
    assert float(ratio(c["loss"][0].sum(), c["loss"][1].sum(), np.nan)) == pytest.approx(
        ref.mean())


def test_paired_bootstrap_of_a_planted_difference():
    n = 200
    base_right = np.zeros(n)
    base_right[:100] = 100.0  # 50% accuracy
    better = base_right.copy()
    better[100:120] = 100.0  # +10 points, on the same examples
    ones = np.ones(n)
    w = resample_weights(n, 1000, 0)
    assert w.shape == (1000, n) and np.all(w.sum(1) == n)
    ci = paired_ci([(better, ones, np.nan), (base_right, ones, np.nan)],
                   (base_right, ones, np.nan), w)
    low, high = ci[0]
    assert low < 10 < high and low > 5 and high < 15  # sd of the paired diff: 2.1 points
    assert ci[1].tolist() == [0.0, 0.0]  # the intact model against itself
