"""Percentile bootstrap intervals over sentences, shared by the studies (docs/METHODS.md: the
Representations probes' and the Syntax heads' 95% intervals): each resample draws the n
sentences with replacement as multinomial counts, so a ratio of sums (right words / words) is
one matrix product per resample, and a paired difference uses the same resample for both."""

from __future__ import annotations

from typing import Sequence

import numpy as np

N_BOOT = 1000


def resamples(n: int, n_boot: int = N_BOOT, seed: int = 0) -> np.ndarray:
    """[n_boot, n] multinomial counts: each row one resample of the n sentences."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(n, np.full(n, 1.0 / n), size=n_boot).astype(np.float64)


def quantiles(v: np.ndarray) -> tuple[float, float]:
    return float(np.quantile(v, 0.025)), float(np.quantile(v, 0.975))


def accuracy_ci(words: Sequence[int], right: Sequence[int], n_boot: int = N_BOOT,
                seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap 95% interval of ``sum(right) / sum(words)``, sentences resampled."""
    c = resamples(len(words), n_boot, seed)
    return quantiles(c @ np.asarray(right, float) / (c @ np.asarray(words, float)))


def paired_ci(words: Sequence[int], right_a: Sequence[int], right_b: Sequence[int],
              n_boot: int = N_BOOT, seed: int = 0) -> tuple[float, float]:
    """The same interval of the accuracy difference b - a over the same words (the same
    resample of the sentences for both)."""
    c = resamples(len(words), n_boot, seed)
    n = c @ np.asarray(words, float)
    return quantiles((c @ np.asarray(right_b, float) - c @ np.asarray(right_a, float)) / n)
