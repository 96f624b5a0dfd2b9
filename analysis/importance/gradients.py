"""Gradient importance of heads (Michel et al. 2019, section 4.1; docs/METHODS.md section 12):
a gate ``xi_h = 1`` multiplies each head's output; ``I_h = mean over examples of
|dL(x)/dxi_h|`` with ``L(x)`` the example's cross-entropy against its gold label; normalised
per layer by the layer's l2 norm (Michel et al.'s layer-wise normalisation), and compared with
the measured drops by Spearman's rank correlation."""

from __future__ import annotations

from typing import Callable
import warnings

import numpy as np

from analysis.core.forward import gate_gradients


def gate_gradient_sum(loaded, labels, prepared,
                      progress: Callable[[int, int], None] | None = None) -> np.ndarray | None:
    """``sum over examples of |dL(x)/dxi|`` [L, H] (None without examples) over the padded
    batches ``prepared`` (:func:`analysis.importance.ablate.padded_batches`), ``labels`` [n]
    the gold labels (the partial of :class:`analysis.importance.job.AblationJob`)."""
    total = None
    for done, (idx, inputs) in enumerate(prepared, 1):
        _, grads = gate_gradients(loaded.model, inputs, labels[idx])
        part = np.abs(grads).sum(0)
        total = part if total is None else total + part
        if progress:
            progress(done, len(prepared))
    return total


def gradient_importance(loaded, ev, prepared, progress: Callable[[int, int], None] | None = None
                        ) -> tuple[np.ndarray, np.ndarray]:
    """(raw ``I`` [L, H], per-layer normalised ``I`` [L, H]) over every example of ``ev``
    (``prepared``: :func:`analysis.importance.ablate.padded_batches`)."""
    raw = gate_gradient_sum(loaded, ev.labels, prepared, progress) / ev.n_examples
    return raw, normalise_per_layer(raw)


def normalise_per_layer(importance: np.ndarray) -> np.ndarray:
    """``I[l, h] / ||I[l, :]||_2`` (a layer of zeros stays zero)."""
    norm = np.sqrt((np.asarray(importance, dtype=np.float64) ** 2).sum(1, keepdims=True))
    return importance / np.where(norm > 0, norm, 1.0)


def spearman(importance: np.ndarray, drops: np.ndarray) -> float:
    """Spearman's rank correlation of importance and measured drop over all heads (scipy;
    NaN when either is constant)."""
    # lazy: imported when used: scipy (heavy)
    from scipy.stats import spearmanr

    a, b = np.ravel(importance), np.ravel(drops)
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(spearmanr(a, b).statistic)
