"""Gradient importance of heads (analysis.importance.gradients)."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.core.forward import gate_gradients
from analysis.importance.ablate import padded_batches
from analysis.importance.gradients import gradient_importance, normalise_per_layer, spearman
from importance_util import tiny_absa


def test_normalise_and_spearman():
    imp = np.array([[3.0, 4.0], [0.0, 0.0]])
    n = normalise_per_layer(imp)
    assert n[0].tolist() == [0.6, 0.8] and n[1].tolist() == [0.0, 0.0]
    assert spearman([1, 2, 3, 4], [10, 20, 30, 45]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert np.isnan(spearman([1, 2, 3], [5, 5, 5]))


def test_importance_is_the_mean_absolute_gradient_per_example():
    loaded, _, ev = tiny_absa(sentences=3)
    prepared = padded_batches(loaded.tokenizer, ev, batch_size=4)
    raw, norm = gradient_importance(loaded, ev, prepared)
    one = np.zeros_like(raw)
    for idx, inputs in padded_batches(loaded.tokenizer, ev, batch_size=1):
        one += np.abs(gate_gradients(loaded.model, inputs, ev.labels[idx])[1][0])
    assert np.allclose(raw, one / ev.n_examples, rtol=1e-4, atol=1e-9)
    assert np.allclose(np.sqrt((norm ** 2).sum(1)), 1.0)
