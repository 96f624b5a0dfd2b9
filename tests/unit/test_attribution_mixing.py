"""Context mixing per layer (analysis.attribution.mixing): known answers on tiny inputs."""

from __future__ import annotations

import numpy as np
import pytest

from analysis import hooks
from analysis.attribution.mixing import (attention_norms, decompose, decomposed_mixing,
                                         head_mean, layer_inputs, normalise_rows, rollout)
from analysis.encoding import encode
from analysis.forward import forward
from bench.reference_attribution import attention_norms_direct
from attribution_models import tiny_classifier


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_classifier(tmp_path_factory)


def _internals(loaded, text="The food was great, the service slow.", pair="service"):
    enc = encode(loaded.tokenizer, text, pair)
    fw = forward(loaded.model, loaded.tokenizer, [enc], hidden_states=True,
                 capture=("value_vectors", "attention_block"))
    return enc, fw, layer_inputs(fw, hooks.layer_parts(loaded.model))


def test_rollout_of_identity_is_identity():
    eye = np.stack([np.eye(5)] * 3)
    for residual in (True, False):
        np.testing.assert_allclose(rollout(eye, residual), eye)


def test_rollout_by_hand():
    a1 = np.array([[1.0, 0.0], [0.5, 0.5]])
    a2 = np.array([[0.0, 1.0], [1.0, 0.0]])
    r = rollout(np.stack([a1, a2]), residual=True)
    h1 = np.array([[1.0, 0.0], [0.25, 0.75]])  # 0.5 A + 0.5 I
    h2 = np.array([[0.5, 0.5], [0.5, 0.5]])
    np.testing.assert_allclose(r[0], h1)
    np.testing.assert_allclose(r[1], h2 @ h1)
    np.testing.assert_allclose(rollout(np.stack([a1, a2]), residual=False)[1], a2 @ a1)


def test_normalise_rows_and_empty_row():
    m = normalise_rows(np.array([[1.0, 3.0], [0.0, 0.0]]))
    np.testing.assert_allclose(m, [[0.25, 0.75], [0.0, 1.0]])


def test_decomposition_sums_back_to_the_block_output(tiny):
    _, fw, lis = _internals(tiny)
    for layer, li in enumerate(lis):
        T, rest, _ = decompose(li)
        block = fw.captured["attention_block"][layer][0].double()
        assert float((T.sum(1) + rest - block).abs().max()) < 1e-5


def test_rows_sum_to_one_and_norms_match_the_direct_formula(tiny):
    _, _, lis = _internals(tiny)
    for li in lis:
        mats = decomposed_mixing(li)
        for m in mats.values():
            np.testing.assert_allclose(m.sum(-1), 1.0, atol=1e-9)
            assert (m >= 0).all()
        np.testing.assert_allclose(attention_norms(li), attention_norms_direct(li), rtol=1e-9)
        np.testing.assert_allclose(head_mean(li.probs.numpy()), li.probs.numpy().mean(0),
                                   atol=1e-12)


def test_identity_attention_gives_no_mixing(tiny):
    import torch

    _, _, lis = _internals(tiny)
    li = lis[0]
    n = li.x.shape[0]
    li.probs = torch.eye(n, dtype=torch.float64).expand(li.probs.shape[0], n, n).clone()
    for name, m in decomposed_mixing(li).items():
        np.testing.assert_allclose(m, np.eye(n), atol=1e-6, err_msg=name)


def test_alti_by_its_definition(tiny):
    """c_ij = max(0, ||y_i||_1 - ||y_i - T_i(x_j)||_1), rows normalised, from the float64
    decomposition."""
    _, _, lis = _internals(tiny)
    li = lis[1]
    T, rest, _ = decompose(li)
    y = (T.sum(1) + rest).numpy()
    Tn = T.numpy()
    c = np.maximum(0, np.abs(y).sum(-1)[:, None] - np.abs(y[:, None] - Tn).sum(-1))
    np.testing.assert_allclose(decomposed_mixing(li, ("alti",))["alti"],
                               c / c.sum(-1, keepdims=True), atol=1e-5)
    np.testing.assert_allclose(decomposed_mixing(li, ("norm_resln",))["norm_resln"],
                               normalise_rows(np.linalg.norm(Tn, axis=-1)), atol=1e-5)
