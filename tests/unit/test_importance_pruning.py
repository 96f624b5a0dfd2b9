"""Pruning orders and curves (analysis.importance.pruning)."""

from __future__ import annotations

import numpy as np

from analysis.importance.ablate import run_ablations, single_ablations
from analysis.importance.pruning import (FRACTIONS, order_by_drop, order_by_gradient,
                                         prunable_fraction, pruning_masks, random_order)
from importance_util import tiny_labelled


def test_orders():
    change = np.array([[-2.0, 0.0], [0.0, 1.0]])
    loss = np.array([[0.1, 0.3], [0.2, 0.0]])
    assert order_by_drop(change, loss).tolist() == [3, 2, 1, 0]  # ties: smaller loss change
    assert order_by_drop(loss, change, higher_better=False).tolist() == [3, 0, 2, 1]
    assert order_by_gradient(np.array([[0.5, 0.1], [0.1, 0.9]])).tolist() == [1, 2, 0, 3]
    assert sorted(random_order(6, 2).tolist()) == list(range(6))
    assert random_order(6, 2).tolist() == np.random.default_rng(2).permutation(6).tolist()
    assert FRACTIONS == (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def test_masks_and_prunable_fraction():
    m = pruning_masks([5, 0, 3, 1, 2, 4], (2, 3), (0.0, 0.5, 1.0))
    assert m[0].sum() == 0 and m[1].reshape(-1)[[5, 0, 3]].all() and m[1].sum() == 3
    assert m[2].all()
    f = (0.0, 0.1, 0.2, 0.3)
    assert prunable_fraction(f, [80, 79.5, 78.5, 79.9], 80) == 0.1  # first loss > 1 at 0.2
    assert prunable_fraction(f, [80, 79, 79, 79], 80) == 0.3
    assert prunable_fraction(f, [1.0, 1.2], 1.0, 0.05, higher_better=False) == 0.0


def test_curve_at_0_is_intact_and_100_percent_of_a_layer_is_the_layer_disabled(tmp_path):
    loaded, ev = tiny_labelled(tmp_path)
    layer1 = [1 * 4 + h for h in (2, 0, 3, 1)]  # the heads of layer 2, some order
    masks = pruning_masks(layer1, (2, 4), (0.0, 0.5, 1.0))
    single = single_ablations(2, 4)
    for method in ("uniform", "mask"):
        curve = run_ablations(loaded, ev, masks, method)
        ref = run_ablations(loaded, ev, single[[0, 10]], method)  # intact, layer 2 disabled
        assert np.abs(curve[0] - ref[0]).max() < 1e-6
        assert np.abs(curve[2] - ref[1]).max() < 1e-5
        assert np.abs(curve[1] - ref[0]).max() > 1e-3  # half the layer: something else
