"""One input by every method (analysis.attribution.run): shapes, the input scores as the last
rollout's [CLS] row, agreement, bad inputs in one line, one real run on the default model."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.attribution import (GRADIENT, METHODS, MIXING, agreement, attribute,
                                  check_methods)
from analysis.attribution.mixing import rollout
from analysis.core.errors import InputError
from attribution_models import tiny_classifier
from builders import one_line


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_classifier(tmp_path_factory)


@pytest.fixture(scope="module")
def tiny_result(tiny):
    return attribute(tiny, "The soup was cold but the staff were lovely.", "food", steps=16)


def test_every_method_and_the_json_schema(tiny_result):
    r = tiny_result
    n = r.n_tokens
    assert list(r.methods) == list(METHODS)
    assert r.prediction["label"] in ("negative", "neutral", "positive")
    assert sum(r.prediction["probabilities"].values()) == pytest.approx(1.0)
    for m in MIXING:
        res = r.methods[m]
        assert res.layers.shape == res.rollout.shape == (2, n, n)
        np.testing.assert_allclose(res.layers.sum(-1), 1.0, atol=1e-9)
        np.testing.assert_allclose(res.rollout.sum(-1), 1.0, atol=1e-9)
        np.testing.assert_allclose(res.input, res.rollout[-1, 0])
        np.testing.assert_allclose(res.rollout, rollout(res.layers, m in ("attention", "norm")))
    for m in GRADIENT:
        assert r.methods[m].layers is None and r.methods[m].input.shape == (n,)
    data = r.to_json()
    assert set(data) == {"tokens", "prediction", "methods"}
    assert data["methods"]["integrated_gradients"]["completeness_gap"] >= 0
    assert data["methods"]["grad_input"]["layers"] is None
    assert len(data["methods"]["alti"]["rollout"][1][0]) == n


def test_agreement_matrix(tiny_result):
    from scipy.stats import spearmanr

    names, rho = agreement(tiny_result)
    assert names == list(METHODS) and np.allclose(np.diag(rho), 1.0)
    np.testing.assert_allclose(rho, rho.T)
    keep = ~tiny_result.special
    a = tiny_result.methods["alti"].input[keep]
    b = tiny_result.methods["integrated_gradients"].input[keep]
    assert rho[names.index("alti"), names.index("integrated_gradients")] == pytest.approx(
        spearmanr(a, b).statistic)


def test_bad_inputs_give_one_line(tiny, tiny_model_dir):
    from analysis.core.models import load_model

    cases = [lambda: check_methods(["alti", "lime"], tiny),
             lambda: attribute(tiny, "   "),
             lambda: attribute(tiny, "word " * 200, max_tokens=64),
             lambda: check_methods([], tiny)]
    for arch in ("distilbert", "albert"):
        other = load_model(str(tiny_model_dir(arch)))
        cases.append(lambda other=other: attribute(other, "The food was great."))
    msgs = []
    for case in cases:
        with pytest.raises(InputError) as exc:
            case()
        msgs.append(one_line(exc))
    assert "Unknown method 'lime'" in msgs[0] and "empty" in msgs[1]
    assert "attribution takes at most 64" in msgs[2]
    assert "cannot decompose" in msgs[4] and "distilbert" in msgs[4]
    assert "albert" in msgs[5]


def test_default_model_on_a_real_sentence(default_model):
    """The embedded encoder (no head): mixing methods only, a plain note, and [CLS] attention in
    the last layer's rollout dominated by the model's habit of attending to [CLS]/[SEP]."""
    r = attribute(default_model, "The food was great but the service was slow.", "service")
    assert r.prediction is None and list(r.methods) == list(MIXING)
    assert any("no classification head" in n for n in r.notes)
    with pytest.raises(InputError):
        attribute(default_model, "The food was great.", methods=["grad_input"])
    for m in MIXING:
        np.testing.assert_allclose(r.methods[m].input.sum(), 1.0, atol=1e-9)
    # ALTI and value zeroing keep a large share of each token in itself (the residual)
    for m in ("alti", "value_zeroing", "norm_resln"):
        diag = np.diagonal(r.methods[m].layers, axis1=1, axis2=2)
        assert diag.mean() > 1.0 / r.n_tokens
