"""Context mixing per layer (analysis.attribution.mixing): known answers on tiny inputs."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.core import hooks
from analysis.attribution.mixing import (attention_norms, decompose, decomposed_mixing,
                                         head_mean, layer_inputs, normalise_rows, rollout)
from analysis.core.encoding import encode
from analysis.core.forward import forward
from bench.references.attribution import attention_norms_direct
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


def _by_definition(li):
    """ALTI's c_ij = max(0, ||y_i||_1 - ||y_i - T_i(x_j)||_1) and norm_resln's ||T_i(x_j)||,
    rows normalised, from the float64 decomposition T itself."""
    T, rest, _ = decompose(li)
    y = (T.sum(1) + rest).numpy()
    Tn = T.numpy()
    c = np.maximum(0, np.abs(y).sum(-1)[:, None] - np.abs(y[:, None] - Tn).sum(-1))
    return c / c.sum(-1, keepdims=True), normalise_rows(np.linalg.norm(Tn, axis=-1))


@pytest.mark.parametrize("precision, atol", [("float64", 1e-12), ("float32", 1e-6)])
def test_alti_and_norm_resln_by_their_definition(tiny, precision, atol):
    """Without forming T (Gram matrices; ALTI's distances summed as they are made, in float64
    or in float32 with float64 sums: the page's), the matrices equal the definition in
    float64 (to 1e-12; ALTI in float32 to the stated 1e-6)."""
    _, _, lis = _internals(tiny)
    for li in lis:
        alti, norm_resln = _by_definition(li)
        mats = decomposed_mixing(li, ("alti", "norm_resln"), precision=precision)
        np.testing.assert_allclose(mats["alti"], alti, atol=atol)
        np.testing.assert_allclose(mats["norm_resln"], norm_resln, atol=1e-12)


@pytest.mark.parametrize("heads", [1, 3, 4, 5, 12])
def test_l1_distances_by_hand(heads):
    """The compiled loop against numpy's direct sum, for head counts that are and are not a
    multiple of its group of 4 (padded with zero heads): float64 to rounding, float32 with
    float64 sums within 1e-6 of the distance's scale."""
    from analysis.attribution.l1 import l1_distances

    rng = np.random.default_rng(heads)
    ni, nj, d = 7, 9, 33
    probs, u, sy = rng.random((heads, ni, nj)), rng.normal(size=(heads, nj, d)), \
        rng.normal(size=(ni, d))
    direct = np.abs(sy[:, None, :] - np.einsum("hij,hjd->ijd", probs, u)).sum(-1)
    np.testing.assert_allclose(l1_distances(probs, u, sy), direct, rtol=1e-13)
    fast = l1_distances(probs, u, sy, precision="float32")
    assert fast.dtype == np.float64 and fast.shape == (ni, nj)
    assert np.abs(fast - direct).max() <= 1e-6 * np.abs(sy).sum(-1).max()


def test_alti_and_norm_resln_on_a_wide_random_layer():
    """A BERT-like layer of random numbers (60 tokens, 12 heads, d = 96, eps as BERT's):
    the diagonal's residual, the biases and gamma all enter; both equal the definition."""
    import torch

    from analysis.attribution.mixing import LayerInputs

    g = torch.Generator().manual_seed(3)
    n, d, H = 60, 96, 12

    def rnd(*shape, s=1.0):
        return s * torch.randn(*shape, generator=g, dtype=torch.float64)

    li = LayerInputs(x=rnd(n, d), probs=torch.softmax(rnd(H, n, n, s=3.0), -1),
                     values=rnd(n, d), w_o=rnd(d, d, s=0.1), b_o=rnd(d, s=0.1),
                     gamma=1 + rnd(d, s=0.1), beta=rnd(d, s=0.1), eps=1e-12)
    alti, norm_resln = _by_definition(li)
    mats = decomposed_mixing(li, ("alti", "norm_resln"))
    np.testing.assert_allclose(mats["alti"], alti, atol=1e-12)
    np.testing.assert_allclose(mats["norm_resln"], norm_resln, atol=1e-12)
    assert (alti > 0).sum() > n  # the clamp at 0 does not hide the comparison
