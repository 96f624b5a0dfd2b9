"""ALTI's L1 distances without forming them: one compiled loop (numba) per layer (issue 48;
docs/METHODS.md section 11, "ALTI", and section 20).

For one layer, ``dist[i, j] = || sy_i - sum_h A_h[i, j] u_h(x_j) ||_1`` over the d numbers of a
vector (``sy_i = s_i y_i`` the block's output scaled by its LayerNorm's ``s_i``, ``u_h(x_j)``
head h's LayerNorm-centred vector of token j): ``n^2 d`` numbers, each an ``H``-term product,
read once. Formed as a tensor (a batched product, then its norm) they cost two passes over
``n^2 d`` numbers that do not fit in cache (BERT-base at 512 tokens: 201M a layer); here each
``(i, j)``'s d numbers are made and summed in registers, four heads at a time, never stored.

The loop runs in float64 (:data:`EXACT`) or float32 with the distances summed in float64; the
float32 path's error: each difference is rounded to 2^-24 of the largest of its terms, so a
distance is within ~1e-7 of its float64 value relative to ``||sy_i||_1`` (measured:
docs/METHODS.md section 20). It releases the interpreter lock: the layers run side by side on
threads (analysis.attribution.run).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

EXACT = "float64"
FAST = "float32"
GROUP = 4  # heads summed in registers at a time (H is padded to a multiple)


@lru_cache(maxsize=1)
def _kernel():
    """The compiled loop (numba: compiled on first use, cached on disk where it can be)."""
    # lazy: imported when used: numba (heavy; compiles this loop on its first call)
    from numba import njit

    @njit(nogil=True, fastmath=True, cache=True)
    def l1_rows(AT, u, syT, out):  # pragma: no cover - compiled (tested through l1_distances)
        # AT [n_j, H, n_i], u [n_j, H, d], syT [d, n_i], out [n_j, n_i] float64 (+=);
        # H a multiple of 4, at least 4
        nj, H, ni = AT.shape[0], AT.shape[1], AT.shape[2]
        d = syT.shape[0]
        tmp = np.empty(ni, dtype=AT.dtype)
        for j in range(nj):
            A = AT[j]
            uj = u[j]
            o = out[j]
            for k in range(d):
                s = syT[k]
                for i in range(ni):
                    tmp[i] = s[i]
                for h in range(0, H - 4, 4):
                    v0, v1, v2, v3 = uj[h, k], uj[h + 1, k], uj[h + 2, k], uj[h + 3, k]
                    a0, a1, a2, a3 = A[h], A[h + 1], A[h + 2], A[h + 3]
                    for i in range(ni):
                        tmp[i] -= v0 * a0[i] + v1 * a1[i] + v2 * a2[i] + v3 * a3[i]
                h = H - 4
                v0, v1, v2, v3 = uj[h, k], uj[h + 1, k], uj[h + 2, k], uj[h + 3, k]
                a0, a1, a2, a3 = A[h], A[h + 1], A[h + 2], A[h + 3]
                for i in range(ni):
                    o[i] += abs(tmp[i] - (v0 * a0[i] + v1 * a1[i] + v2 * a2[i] + v3 * a3[i]))

    return l1_rows


def l1_distances(probs: np.ndarray, u: np.ndarray, sy: np.ndarray,
                 precision: str = EXACT) -> np.ndarray:
    """``dist[i, j] = ||sy[i] - sum_h probs[h, i, j] * u[h, j]||_1`` [n_i, n_j] float64 for
    ``probs`` [H, n_i, n_j], ``u`` [H, n_j, d], ``sy`` [n_i, d] (numpy or CPU torch), computed in
    ``precision`` (:data:`EXACT` or :data:`FAST`), on the calling thread."""
    dt = np.float64 if precision == EXACT else np.float32
    probs, u, sy = (np.asarray(a, dtype=dt) for a in (probs, u, sy))
    H, ni, nj = probs.shape
    pad = (-H) % GROUP + (GROUP if H == 0 else 0)
    AT = np.zeros((nj, H + pad, ni), dtype=dt)
    AT[:, :H] = probs.transpose(2, 0, 1)
    uj = np.zeros((nj, H + pad, u.shape[-1]), dtype=dt)
    uj[:, :H] = u.transpose(1, 0, 2)
    out = np.zeros((nj, ni), dtype=np.float64)
    _kernel()(AT, uj, np.ascontiguousarray(sy.T), out)
    return out.T
