"""analysis.representations.single: one input's projection for one or two models, the JSON
schema, linear CKA against the drift study's accumulator."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.drift.similarity import CKAAccumulator
from analysis.core.models import load_model
from analysis.representations.projection import pca_scores
from analysis.representations.single import input_representations, linear_cka


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    return load_model(str(tiny_model_dir("bert")))


def test_linear_cka_equals_the_drift_accumulator():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(20, 8))
    y = x @ rng.normal(size=(8, 5)) + rng.normal(size=(20, 5))
    acc = CKAAccumulator()
    acc.update(x, y)
    assert linear_cka(x, y) == pytest.approx(acc.value(), rel=1e-9)
    assert linear_cka(x, 3 * x + 1) == pytest.approx(1.0)


def test_one_model_pca_is_each_layers_own_pca(tiny):
    from analysis.representations.states import input_states

    r = input_representations(tiny, "The soup was cold.", method="pca")
    st = input_states(tiny, "The soup was cold.")
    assert r.n_layers == 3 and r.compare_points is None and r.agreement == []
    for l in range(3):
        np.testing.assert_allclose(r.points[l], pca_scores(st.layers[l]), atol=1e-4)
    js = r.to_json()
    assert js["tokens"] == ["[CLS]", "the", "soup", "was", "cold", ".", "[SEP]"]
    assert js["projection"]["method"] == "pca" and js["compare"] is None
    assert np.asarray(js["projection"]["layers"]).shape == (3, 7, 2)
    assert r.segments == [0] * 7 and r.special == [True] + [False] * 5 + [True]
    assert len(r.steps) == 2


def test_same_model_twice_gives_the_same_points_and_full_agreement(tiny):
    r = input_representations(tiny, "The soup was cold.", "soup", compare=tiny,
                              method="aligned")
    for a, b in zip(r.points, r.compare_points):
        np.testing.assert_array_equal(a, b)
    assert r.agreement == pytest.approx([1.0, 1.0, 1.0])
    assert r.to_json()["compare"]["method"] == "aligned"
    assert r.segments[-2:] == [1, 1]
