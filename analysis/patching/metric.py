"""The patching metric (docs/METHODS.md, "Causal patching"; Zhang & Nanda 2024): the logit
difference between the clean prediction's class and the counterfactual's, normalised so that
a patch that changes nothing is 0 and one that carries the whole change is 1, in either
direction; and the probability of the clean prediction's class as a second view."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DIRECTIONS = ("noising", "denoising")
# A counterfactual whose logit difference moves by less than this (in logits) changes too
# little for a normalised effect to mean anything: the page warns, the corpus view skips it.
MIN_GAP = 1.0


@dataclass(frozen=True)
class Contrast:
    """The two classes compared and the logit difference ``m = z[a] - z[b]`` on both runs."""

    a: int  # the clean run's predicted class
    b: int  # the counterfactual's predicted class (or the rule's stand-in, see contrast())
    clean: float
    counter: float

    @property
    def gap(self) -> float:
        return self.counter - self.clean


def logit_diff(logits, a: int, b: int) -> np.ndarray:
    """``z[..., a] - z[..., b]``."""
    z = np.asarray(logits, dtype=np.float64)
    return z[..., a] - z[..., b]


def contrast(clean_logits, counter_logits) -> Contrast:
    """The classes to compare: ``a`` = the clean prediction, ``b`` = the counterfactual's. When
    both predict the same class, ``b`` is the class whose logit gains most on ``a``'s from the
    clean run to the counterfactual (the direction the counterfactual pushes in)."""
    z, zc = np.asarray(clean_logits, np.float64), np.asarray(counter_logits, np.float64)
    a, b = int(z.argmax()), int(zc.argmax())
    if a == b:
        gain = (zc - zc[a]) - (z - z[a])
        gain[a] = -np.inf
        b = int(gain.argmax())
    return Contrast(a, b, float(logit_diff(z, a, b)), float(logit_diff(zc, a, b)))


def normalised(patched, c: Contrast, direction: str) -> np.ndarray:
    """The share of the clean -> counterfactual change a patch carries: noising (the run on the
    clean input, an activation from the counterfactual) ``(m_p - m_clean) / (m_counter -
    m_clean)``; denoising (the run on the counterfactual, an activation from the clean input)
    ``(m_counter - m_p) / (m_counter - m_clean)``. 0: nothing moved; 1: the whole change. NaN
    when the two runs have the same logit difference."""
    m = np.asarray(patched, dtype=np.float64)
    if direction not in DIRECTIONS:
        raise ValueError(f"Unknown direction {direction!r}: use {DIRECTIONS}.")
    if c.gap == 0:
        return np.full(m.shape, np.nan)
    return (m - c.clean) / c.gap if direction == "noising" else (c.counter - m) / c.gap


def softmax(logits) -> np.ndarray:
    z = np.asarray(logits, dtype=np.float64)
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)
