"""Pruning curves (Michel et al. 2019, section 4.2; docs/METHODS.md section 12): heads removed
in a fixed order, 0% to 90% of all heads in steps of 10%, the metric after each step, with the
order from the measured drops, from gradient importance, and random orders (5 seeds)."""

from __future__ import annotations

import numpy as np

FRACTIONS = tuple(round(0.1 * k, 1) for k in range(10))
RANDOM_SEEDS = (0, 1, 2, 3, 4)


def order_by_drop(change: np.ndarray, loss_change: np.ndarray, higher_better: bool = True
                  ) -> np.ndarray:
    """Flat head indices (``l * H + h``), the least harmful removal first: the largest change
    of the metric (the smallest for the loss), ties by the smaller loss change, then index."""
    c = np.ravel(change) if higher_better else -np.ravel(change)
    return np.lexsort((np.arange(c.size), np.ravel(loss_change), -c))


def order_by_gradient(importance: np.ndarray) -> np.ndarray:
    """Flat head indices, the smallest gradient importance first (ties by index)."""
    imp = np.ravel(importance)
    return np.lexsort((np.arange(imp.size), imp))


def random_order(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).permutation(n)


def n_removed(fraction: float, n: int) -> int:
    """Heads removed at ``fraction`` of ``n``: ``round(fraction * n)`` (Python rounding)."""
    return int(round(fraction * n))


def pruning_masks(order, shape: tuple[int, int], fractions=FRACTIONS) -> np.ndarray:
    """[len(fractions), L, H] disabled heads: the first ``round(f * len(order))`` heads of
    ``order`` (flat indices) at each fraction ``f``."""
    order = np.asarray(order)
    out = np.zeros((len(fractions), *shape), dtype=bool)
    for i, f in enumerate(fractions):
        flat = out[i].reshape(-1)
        flat[order[:n_removed(f, len(order))]] = True
    return out


def prunable_fraction(fractions, values, intact: float, tolerance: float = 1.0,
                      higher_better: bool = True) -> float:
    """The largest fraction before the curve first loses more than ``tolerance`` against the
    intact model (0.0 when even the first step does)."""
    best = 0.0
    for f, v in zip(fractions, values):
        loss = (intact - v) if higher_better else (v - intact)
        if not np.isfinite(v) or loss > tolerance:
            break
        best = f
    return float(best)
