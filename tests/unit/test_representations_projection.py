"""analysis.representations.projection: per-layer PCA against numpy's SVD, Procrustes
alignment of a planted rotation, one fit for two models, t-SNE / UMAP with a fixed seed."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.core.errors import InputError
from analysis.representations.projection import (align_layers, pca_scores, procrustes_rotation,
                                                  project_layers)


def rotation(theta: float) -> np.ndarray:
    return np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])


def planted(n=40, d=10, seed=0):
    """Points with two strong directions (variances 25 and 4) and weak noise."""
    rng = np.random.default_rng(seed)
    basis, _ = np.linalg.qr(rng.normal(size=(d, d)))
    z = rng.normal(size=(n, d)) * np.array([5.0, 2.0] + [0.1] * (d - 2))
    return z @ basis.T + 3.0


def test_pca_scores_match_numpy_svd_up_to_sign():
    x = planted()
    xc = x - x.mean(0)
    u, s, _ = np.linalg.svd(xc, full_matrices=False)
    want = u[:, :2] * s[:2]
    got = pca_scores(x)
    for k in range(2):
        sign = np.sign(got[:, k] @ want[:, k])
        np.testing.assert_allclose(got[:, k], sign * want[:, k], atol=1e-8)
    # the first component carries the planted variance of 25
    assert got[:, 0].var() > 15 > 6 > got[:, 1].var() > 2


def test_procrustes_recovers_a_planted_rotation():
    rng = np.random.default_rng(1)
    target = rng.normal(size=(30, 2))
    target -= target.mean(0)
    r = rotation(0.7)
    moved = target @ r.T  # rotate every point by 0.7 rad
    rot = procrustes_rotation(moved, target)
    np.testing.assert_allclose(rot, r, atol=1e-10)
    np.testing.assert_allclose(moved @ rot, target, atol=1e-10)


def test_align_layers_undoes_each_layers_rotation_and_reflection():
    rng = np.random.default_rng(2)
    base = rng.normal(size=(25, 2))
    base -= base.mean(0)
    flip = np.diag([1.0, -1.0])
    layers = [base, base @ rotation(1.1).T, base @ flip, base @ rotation(-2.0).T]
    out = align_layers(layers)
    for pts in out:
        np.testing.assert_allclose(pts, base, atol=1e-9)


def test_two_models_share_one_fit():
    a = [planted(seed=s) for s in range(3)]
    pa, pb = project_layers(a, [x.copy() for x in a], "pca")
    for x, y in zip(pa, pb):
        np.testing.assert_array_equal(x, y)
    # B shifted by a constant: each model is centred on its own mean, so nothing moves
    pa2, pb2 = project_layers(a, [x + 100.0 for x in a], "pca")
    for x, y in zip(pa2, pb2):
        np.testing.assert_allclose(x, y, atol=1e-3)
    # alone, A's points are its own PCA
    alone, none = project_layers(a, None, "pca")
    assert none is None
    np.testing.assert_allclose(np.abs(alone[1]), np.abs(pca_scores(a[1])), atol=1e-5)


def test_aligned_mode_is_pca_rotated():
    a = [planted(seed=s) for s in range(3)]
    pca, _ = project_layers(a, None, "pca")
    aligned, _ = project_layers(a, None, "aligned")
    np.testing.assert_allclose(aligned[0], pca[0], atol=1e-6)
    for p, q in zip(pca, aligned):  # a rotation keeps every point's distance to the centre
        np.testing.assert_allclose(np.linalg.norm(p, axis=1), np.linalg.norm(q, axis=1),
                                   rtol=1e-4, atol=1e-4)


def test_tsne_is_seeded_and_keeps_planted_groups_together():
    rng = np.random.default_rng(3)
    groups = np.repeat(np.eye(8) * 10, 5, axis=0) + rng.normal(size=(40, 8))
    one, _ = project_layers([groups], None, "tsne", seed=0)
    two, _ = project_layers([groups], None, "tsne", seed=0)
    np.testing.assert_allclose(one[0], two[0], atol=1e-5)
    assert one[0].shape == (40, 2)
    # each planted group stays together: its spread is below the spread of all points
    pts = one[0]
    inner = np.mean([pts[k * 5:(k + 1) * 5].std(0).mean() for k in range(8)])
    assert inner < 0.5 * pts.std(0).mean()


def test_umap_gets_the_seed_and_the_union_of_both_models(monkeypatch):
    """umap-learn's first call compiles its numba code (a minute on a busy machine), so the
    test stands a recorder in for it; bench/studies/representations.py runs the real one."""
    import sys
    import types

    calls = []

    class UMAP:
        def __init__(self, **kw):
            calls.append(kw)

        def fit_transform(self, x):
            calls[-1]["rows"] = x.shape
            return x[:, :2] * 2.0

    monkeypatch.setitem(sys.modules, "umap", types.SimpleNamespace(UMAP=UMAP))
    a = [planted(n=10, seed=s) for s in range(2)]
    b = [planted(n=10, seed=s + 5) for s in range(2)]
    pa, pb = project_layers(a, b, "umap", seed=7)
    assert len(calls) == 2
    assert calls[0] == {"n_components": 2, "n_neighbors": 15, "random_state": 7,
                        "init": "spectral", "n_jobs": 1, "rows": (20, 10)}
    np.testing.assert_allclose(pa[1], 2.0 * a[1][:, :2], rtol=1e-6)  # raw vectors, no centring
    np.testing.assert_allclose(pb[1], 2.0 * b[1][:, :2], rtol=1e-6)
    project_layers([planted(n=5)], None, "umap")
    assert calls[-1]["n_neighbors"] == 4 and calls[-1]["init"] == "random"  # a short input


def test_bad_inputs_one_line():
    with pytest.raises(InputError, match="too few to project"):
        project_layers([np.zeros((2, 4))], None, "pca")
    with pytest.raises(InputError, match="Unknown projection"):
        project_layers([np.zeros((5, 4))], None, "lda")
    with pytest.raises(InputError, match="differ in size"):
        project_layers([np.zeros((5, 4))], [np.zeros((5, 3))], "pca")


def test_pca_falls_back_to_an_eigendecomposition_when_the_svd_does_not_converge(monkeypatch):
    """LAPACK's gesdd can stop with "SVD did not converge" on rank-deficient input (two
    identical models stacked: issue 35); the fallback gives scikit-learn's own scores and signs."""
    import sklearn.decomposition

    for x in (planted(), planted(n=6, d=10, seed=3), np.vstack([planted(n=8)] * 2)):
        want = pca_scores(x)

        def fails(self, *a, **k):
            raise np.linalg.LinAlgError("SVD did not converge")

        with monkeypatch.context() as m:
            m.setattr(sklearn.decomposition.PCA, "fit_transform", fails)
            got = pca_scores(x)
        np.testing.assert_allclose(got, want, atol=1e-7)


def test_non_finite_vectors_are_one_plain_line_naming_the_layer():
    good = planted(n=5, d=4)
    bad = good.copy()
    bad[2, 1] = np.nan
    bad[4, 0] = np.inf
    with pytest.raises(InputError, match=r"^Layer 1 can't be drawn: 2 of 5 token vectors hold "
                                         r"numbers that are not finite"):
        project_layers([good, bad])
    with pytest.raises(InputError, match="2 of the second model's 5 token vectors"):
        project_layers([good, good], [good, bad])
