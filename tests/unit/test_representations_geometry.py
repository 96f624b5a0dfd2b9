"""analysis.representations.geometry: anisotropy of isotropic Gaussian vectors near 0, of a
shared direction near 1; self-similarity by hand; the word and pair choices."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.representations.geometry import (anisotropy, layer_geometry, random_pairs,
                                               self_similarity, word_contexts)


def test_anisotropy_of_isotropic_gaussians_is_near_zero_and_of_a_shared_direction_near_one():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2000, 256))
    groups = np.arange(2000) // 10
    pairs = random_pairs(groups, 2000, seed=0)
    assert len(pairs) == 2000
    assert abs(anisotropy(x, pairs)) < 0.01
    shared = x * 0.1 + 10.0  # every vector near (10, 10, ...)
    assert anisotropy(shared, pairs) > 0.99


def test_random_pairs_cross_sentences_and_are_seeded():
    groups = np.array([0, 0, 0, 1, 1, 2])
    pairs = random_pairs(groups, 50, seed=3)
    assert (groups[pairs[:, 0]] != groups[pairs[:, 1]]).all()
    np.testing.assert_array_equal(pairs, random_pairs(groups, 50, seed=3))
    assert len(random_pairs([0, 0, 0], 10)) == 0


def test_self_similarity_by_hand():
    # "bank" in 3 sentences (vectors e1, e1, e2), "the" in 2 only (left out with min 3)
    forms = ["Bank", "the", "bank", "the", "bank", "bank"]
    groups = [0, 0, 1, 1, 2, 2]  # sentence 2 has "bank" twice: the first one counts
    x = np.array([[1, 0], [5, 5], [2, 0], [5, 5], [0, 3], [9, 9]], dtype=float)
    ctx = word_contexts(forms, groups, min_contexts=3)
    assert ctx.forms == ["bank"]
    np.testing.assert_array_equal(ctx.rows[0], [0, 2, 4])
    # cosines: (0,2) = 1, (0,4) = 0, (2,4) = 0 -> mean 1/3
    assert self_similarity(x, ctx) == pytest.approx(1 / 3)
    assert self_similarity(x, word_contexts(forms, groups, min_contexts=4)) is None


def test_layer_geometry_lists_every_layer():
    rng = np.random.default_rng(1)
    layers = [rng.normal(size=(60, 8)) for _ in range(3)]
    forms = ["w"] * 60
    groups = np.arange(60) // 6
    aniso, selfsim, n = layer_geometry(layers, forms, groups, n_pairs=100, min_contexts=5)
    assert len(aniso) == len(selfsim) == 3 and n == 1
    assert all(abs(a) < 0.3 for a in aniso)
