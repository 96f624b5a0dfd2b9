"""Similarity of the two models' attention and representations (docs/METHODS.md section 9).

- Per-head cosine (Kovaleva et al. 2019) of one example's maps: :func:`head_cosine`.
- Linear CKA (Kornblith et al. 2019), streamed batch by batch over a corpus:
  :class:`CKAAccumulator`.

The batched versions of the per-example measures are in :mod:`analysis.drift.batched`.
"""

from __future__ import annotations

import numpy as np


def head_cosine(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Cosine of the flattened maps per head: [L,H,n,n] x [L,H,n,n] -> [L,H] (float64),
    ``cos = (a . b) / (||a|| ||b||)``, 0 where a norm is 0."""
    a = np.asarray(before, dtype=np.float64).reshape(*before.shape[:-2], -1)
    b = np.asarray(after, dtype=np.float64).reshape(*after.shape[:-2], -1)
    denom = np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)
    return np.divide((a * b).sum(-1), denom, out=np.zeros(denom.shape), where=denom > 0)


class CKAAccumulator:
    """Streams linear CKA of representations X [N, d1], Y [N, d2] of the same N items:
    ``||Yc^T Xc||_F^2 / (||Xc^T Xc||_F ||Yc^T Yc||_F)`` with column-centred Xc, Yc.

    Accumulates X^T X, Y^T Y, Y^T X and the column sums; centring uses
    ``Xc^T Yc = X^T Y - sx sy^T / N``. Rows are shifted by a fixed vector (the first chunk's
    mean) before accumulating; centred products do not depend on the shift, and it keeps the
    float32 chunk products away from the cancellation that large column means would cause.
    Running sums are float64."""

    def __init__(self) -> None:
        self.n = 0
        self.xtx = self.yty = self.ytx = self.sx = self.sy = None
        self.cx = self.cy = None

    def update(self, x, y) -> None:
        """Add the rows of ``x`` and ``y`` (numpy arrays or torch tensors, same row count)."""
        # lazy: imported when used: torch (heavy)
        import torch

        x = torch.as_tensor(np.asarray(x) if not torch.is_tensor(x) else x)
        y = torch.as_tensor(np.asarray(y) if not torch.is_tensor(y) else y)
        if len(x) != len(y):
            raise ValueError("CKA needs the same items in both representations.")
        if not len(x):
            return
        dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
        x, y = x.to(dtype), y.to(dtype)
        if self.xtx is None:
            self.cx, self.cy = x.mean(0), y.mean(0)
            self.xtx = np.zeros((x.shape[1], x.shape[1]))
            self.yty = np.zeros((y.shape[1], y.shape[1]))
            self.ytx = np.zeros((y.shape[1], x.shape[1]))
            self.sx = np.zeros(x.shape[1])
            self.sy = np.zeros(y.shape[1])
        x, y = x - self.cx, y - self.cy
        self.n += len(x)
        self.xtx += (x.T @ x).double().numpy()
        self.yty += (y.T @ y).double().numpy()
        self.ytx += (y.T @ x).double().numpy()
        self.sx += x.double().sum(0).numpy()
        self.sy += y.double().sum(0).numpy()

    def merge(self, other: "CKAAccumulator") -> "CKAAccumulator":
        """Add the rows another accumulator saw (a shard of the same corpus), in place. Its
        sums are re-expressed around this one's shift c (x - c = (x - c') + d, d = c' - c):
        sum (x-c)(x-c)^T = P' + S' d^T + d S'^T + n' d d^T, sum (x-c) = S' + n' d; exact up
        to float64 rounding."""
        if not other.n:
            return self
        if not self.n:
            self.__dict__.update({k: (v.copy() if hasattr(v, "copy") else v)
                                  for k, v in other.__dict__.items()})
            return self
        dx = (other.cx - self.cx).double().numpy()
        dy = (other.cy - self.cy).double().numpy()
        n, sx, sy = other.n, other.sx, other.sy
        self.xtx += other.xtx + np.outer(sx, dx) + np.outer(dx, sx) + n * np.outer(dx, dx)
        self.yty += other.yty + np.outer(sy, dy) + np.outer(dy, sy) + n * np.outer(dy, dy)
        self.ytx += other.ytx + np.outer(sy, dx) + np.outer(dy, sx) + n * np.outer(dy, dx)
        self.sx += sx + n * dx
        self.sy += sy + n * dy
        self.n += n
        return self

    def value(self) -> float:
        """CKA of all rows added so far (nan before any, or when the denominator is 0)."""
        if not self.n:
            return float("nan")
        n = self.n
        xtx = self.xtx - np.outer(self.sx, self.sx) / n
        yty = self.yty - np.outer(self.sy, self.sy) / n
        ytx = self.ytx - np.outer(self.sy, self.sx) / n
        denom = np.linalg.norm(xtx) * np.linalg.norm(yty)
        return float(np.linalg.norm(ytx) ** 2 / denom) if denom > 0 else float("nan")
