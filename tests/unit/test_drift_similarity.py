"""Per-head cosine, RSA and linear CKA on hand-made and random representations; the one-example
numpy definitions of RSA and CKA that the batched measures are checked against."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.drift import CKAAccumulator, head_cosine


def token_similarity(hidden: np.ndarray) -> np.ndarray:
    """Token-by-token cosine-similarity matrix of one layer's hidden states [n,d] -> [n,n]."""
    h = np.asarray(hidden, dtype=np.float64)
    norm = np.linalg.norm(h, axis=-1, keepdims=True)
    h = np.divide(h, norm, out=np.zeros_like(h), where=norm > 0)
    return h @ h.T


def rsa(hidden_before: np.ndarray, hidden_after: np.ndarray) -> float:
    """Pearson r between the upper triangles (i<j) of the two token-similarity matrices of one
    layer's states on the same n tokens, [n, d] (d may differ); nan when a triangle is
    constant (r is undefined)."""
    n = len(hidden_before)
    iu = np.triu_indices(n, k=1)
    x = token_similarity(hidden_before)[iu]
    y = token_similarity(hidden_after)[iu]
    x, y = x - x.mean(), y - y.mean()
    denom = math.sqrt(float((x * x).sum() * (y * y).sum()))
    return float((x * y).sum() / denom) if denom > 1e-12 else float("nan")


def linear_cka(x: np.ndarray, y: np.ndarray) -> float:
    """Linear CKA of representations [N, d1], [N, d2] of the same N items, in one chunk."""
    acc = CKAAccumulator()
    acc.update(x, y)
    return acc.value()


def test_head_cosine_hand_computed():
    a = np.zeros((1, 2, 2, 2))
    b = np.zeros((1, 2, 2, 2))
    a[0, 0] = [[1, 0], [0, 1]]
    b[0, 0] = [[1, 0], [1, 0]]  # dot 1, norms sqrt2 sqrt2 -> 0.5
    a[0, 1] = [[0.5, 0.5], [0.5, 0.5]]
    b[0, 1] = [[0.5, 0.5], [0.5, 0.5]]
    cos = head_cosine(a, b)
    assert cos.shape == (1, 2)
    assert cos[0, 0] == pytest.approx(0.5)
    assert cos[0, 1] == pytest.approx(1.0)


def test_cka_hand_computed_and_equal_to_squared_pearson_in_one_dimension():
    x = np.array([[1.0], [2.0], [3.0]])
    y = np.array([[1.0], [0.0], [2.0]])
    # centred x = (-1, 0, 1), y = (0, -1, 1): ||y'x||^2 = 1, ||x'x|| = ||y'y|| = 2 -> 1/4
    assert linear_cka(x, y) == pytest.approx(0.25)
    assert linear_cka(x, y) == pytest.approx(np.corrcoef(x[:, 0], y[:, 0])[0, 1] ** 2)


def test_rsa_and_cka_identity_and_orthogonal_invariance():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 12)) + 3.0  # large column means: centring matters
    q, _ = np.linalg.qr(rng.normal(size=(12, 12)))
    y = rng.normal(size=(60, 12))
    assert linear_cka(x, x) == pytest.approx(1.0, abs=1e-6)
    assert linear_cka(x, x @ q) == pytest.approx(1.0, abs=1e-6)
    assert linear_cka(x, 5.0 * x @ q + 2.0) == pytest.approx(1.0, abs=1e-6)
    assert linear_cka(x, y) < 0.6
    assert rsa(x, x) == pytest.approx(1.0)
    assert rsa(x, x @ q) == pytest.approx(1.0)  # cosine similarities survive rotation
    assert rsa(x, y) < 0.5
    # Kornblith's feature-space form equals the Gram (HSIC) form on centred kernels
    h = np.eye(60) - 1.0 / 60
    k, l_ = h @ x @ x.T @ h, h @ y @ y.T @ h
    hsic = np.trace(k @ l_) / np.sqrt(np.trace(k @ k) * np.trace(l_ @ l_))
    assert linear_cka(x, y) == pytest.approx(hsic, rel=1e-6)
    # streaming in chunks gives the one-shot value
    acc = CKAAccumulator()
    for part in np.array_split(np.arange(60), 7):
        acc.update(x[part], y[part])
    assert acc.value() == pytest.approx(hsic, rel=1e-5)
    # RSA is the Pearson r of the cosine-similarity triangles (reference: numpy corrcoef)
    iu = np.triu_indices(60, 1)
    ref = np.corrcoef(token_similarity(x)[iu], token_similarity(y)[iu])[0, 1]
    assert rsa(x, y) == pytest.approx(ref)
