"""2-D projections of every layer's vectors (docs/METHODS.md section 13, "Projections").

- ``pca``: each layer's own PCA (scikit-learn) of its centred vectors, the first two
  components' scores (VisBERT, van Aken et al. 2019). Axes of different layers are not
  comparable: each layer has its own components.
- ``aligned``: the PCA points of layer l rotated onto the (already aligned) points of layer
  l - 1 by orthogonal Procrustes (:func:`scipy.linalg.orthogonal_procrustes`), from layer 1 up,
  so that a point's movement from one layer to the next means something.
- ``tsne`` / ``umap``: scikit-learn's t-SNE and umap-learn's UMAP with a fixed seed.

With a second model's vectors (the same tokens), every layer is fitted once on the union of
both models' vectors (each model centred on its own mean first for PCA) and both are projected
with that one fit, so the two panels share their axes.
"""

from __future__ import annotations

from typing import Sequence
import warnings

import numpy as np

from analysis.core.errors import InputError
from analysis.representations.threads import one_thread

METHODS = ("pca", "aligned", "tsne", "umap")
METHOD_NAMES = {"pca": "PCA per layer", "aligned": "PCA aligned across layers (Procrustes)",
                "tsne": "t-SNE", "umap": "UMAP"}
MIN_POINTS = 3  # [CLS] + one word + [SEP]: the fewest a 2-D projection is drawn for


def check_method(method: str) -> str:
    if method not in METHODS:
        raise InputError(f"Unknown projection {method!r}; choose one of {', '.join(METHODS)}.")
    return method


def pca_scores(x: np.ndarray) -> np.ndarray:
    """[n, 2] scores of the first two principal components of ``x`` [n, d], centred on its
    mean (scikit-learn's sign convention; a missing component is a column of zeros).

    scikit-learn's full SVD (LAPACK gesdd) can stop with "SVD did not converge" on
    rank-deficient input, e.g. two identical models' vectors stacked; the same components then
    come from the eigenvectors of the covariance matrix (:func:`_pca_by_eigh`).

    With at least as many rows as columns (a corpus's 1,500 words), scikit-learn's
    ``covariance_eigh`` solver: the same components from the d x d covariance matrix, 10x
    faster than the full SVD of the n x d matrix (issue 48; equal to it at float64 precision
    for the first two components; docs/METHODS.md section 20)."""
    # lazy: imported when used: scikit-learn (heavy)
    from sklearn.decomposition import PCA

    x = np.asarray(x, dtype=np.float64)
    x = x - x.mean(0, keepdims=True)
    k = min(2, x.shape[0], x.shape[1])
    out = np.zeros((x.shape[0], 2))
    if k and np.abs(x).max() > 0:
        try:
            solver = "covariance_eigh" if x.shape[0] >= x.shape[1] else "full"
            out[:, :k] = PCA(n_components=k, svd_solver=solver).fit_transform(x)
        except np.linalg.LinAlgError:
            out[:, :k] = _pca_by_eigh(x, k)
    return out


def _pca_by_eigh(x: np.ndarray, k: int) -> np.ndarray:
    """The first ``k`` principal-component scores of the centred ``x`` from a symmetric
    eigendecomposition (of x^T x, or of x x^T when there are fewer rows than columns), signed as
    scikit-learn signs them: each component's largest-magnitude loading is positive."""
    # lazy: imported when used: scipy (heavy)
    from scipy.linalg import eigh

    n, d = x.shape
    if n < d:  # scores = U * s: the eigenvectors of the Gram matrix, scaled
        w, u = eigh(x @ x.T)
        order = np.argsort(w)[::-1][:k]
        vt = (x.T @ u[:, order]).T  # rows proportional to the loadings
        norms = np.linalg.norm(vt, axis=1, keepdims=True)
        vt = np.divide(vt, norms, out=np.zeros_like(vt), where=norms > 0)
    else:
        w, v = eigh(x.T @ x)
        vt = v[:, np.argsort(w)[::-1][:k]].T
    signs = np.sign(vt[np.arange(k), np.abs(vt).argmax(1)])
    signs[signs == 0] = 1.0
    return x @ (vt * signs[:, None]).T


def procrustes_rotation(points: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The orthogonal 2 x 2 matrix R minimising ||points @ R - target||_F (both centred;
    a reflection is allowed, as PCA's signs are arbitrary)."""
    # lazy: imported when used: scipy (heavy)
    from scipy.linalg import orthogonal_procrustes

    rot, _ = orthogonal_procrustes(np.asarray(points, float), np.asarray(target, float))
    return rot


def align_layers(layers: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Each layer's 2-D points rotated onto the previous layer's aligned points."""
    out = [np.asarray(layers[0], float)]
    for pts in layers[1:]:
        pts = np.asarray(pts, float)
        out.append(pts @ procrustes_rotation(pts, out[-1]))
    return out


def _tsne(x: np.ndarray, seed: int) -> np.ndarray:
    # lazy: imported when used: scikit-learn (heavy)
    from sklearn.manifold import TSNE

    n = x.shape[0]
    perplexity = float(min(30.0, max(1.0, (n - 1) / 3.0)))
    return TSNE(n_components=2, perplexity=perplexity, init="pca", random_state=seed,
                max_iter=500).fit_transform(x)


def _umap(x: np.ndarray, seed: int) -> np.ndarray:
    # lazy: imported when used: umap (heavy, slow to import)
    import umap

    n = x.shape[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reducer = umap.UMAP(n_components=2, n_neighbors=max(2, min(15, n - 1)),
                            random_state=seed, init="spectral" if n > 16 else "random",
                            n_jobs=1)
        return reducer.fit_transform(x)


def _fit(method: str, x: np.ndarray, seed: int) -> np.ndarray:
    if method in ("pca", "aligned"):
        return pca_scores(x)
    if method == "tsne":
        return _tsne(x, seed)
    return _umap(x, seed)


def _check_finite(x: np.ndarray, layer: int, whose: str) -> None:
    bad = int((~np.isfinite(x)).any(axis=-1).sum()) if x.size else 0
    if bad:
        raise InputError(f"Layer {layer} can't be drawn: {bad} of {whose}{x.shape[0]} token "
                         "vectors hold numbers that are not finite (NaN or infinity), so the model "
                         "overflowed on this input.")


def project_layers(layers_a: Sequence[np.ndarray], layers_b: Sequence[np.ndarray] | None = None,
                   method: str = "pca", seed: int = 0,
                   progress=None) -> tuple[list[np.ndarray], list[np.ndarray] | None]:
    """2-D points of every layer for model A (``layers_a[l]`` is [n, d]) and, when given, model
    B on the same n items with the same fit (see the module docstring). Returns float32 lists
    of [n, 2] arrays (B's None without B). ``progress(done, total)`` after every layer."""
    check_method(method)
    n = np.asarray(layers_a[0]).shape[0]
    if n < MIN_POINTS:
        raise InputError(f"{n} vector(s) are too few to project; give at least one word "
                         "(three tokens with [CLS] and [SEP]).")
    if layers_b is not None:
        if len(layers_b) != len(layers_a) or np.asarray(layers_b[0]).shape[0] != n:
            raise InputError("The two models' vectors are not over the same tokens and layers.")
    pts = []
    for l, xa in enumerate(layers_a):
        xa = np.asarray(xa, np.float64)
        _check_finite(xa, l, "")
        if layers_b is None:
            x = xa
        else:
            xb = np.asarray(layers_b[l], np.float64)
            _check_finite(xb, l, "the second model's ")
            if xb.shape != xa.shape:
                raise InputError(f"The two models' vectors differ in size at layer {l} "
                                 f"({xa.shape[1]} and {xb.shape[1]}).")
            if method in ("pca", "aligned"):
                xa, xb = xa - xa.mean(0), xb - xb.mean(0)
            x = np.vstack([xa, xb])
        with one_thread():
            pts.append(_fit(method, x, seed))
        if progress is not None:
            progress(l + 1, len(layers_a))
    if method == "aligned":
        pts = align_layers(pts)
    a = [p[:n].astype(np.float32) for p in pts]
    b = [p[n:].astype(np.float32) for p in pts] if layers_b is not None else None
    return a, b
