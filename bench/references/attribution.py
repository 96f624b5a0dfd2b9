"""Plain references for the attribution study (docs/METHODS.md section 11), used by the
benchmark and the tests:

- :func:`value_zeroing_loop`: Mohebbi et al.'s own procedure, one zeroed token at a time (one
  rerun of the layer per token), against which the batched pass is timed and checked;
- :func:`attention_norms_direct`: ``||sum_h A_h[i,j] f_h(x_j)||`` with every vector formed.
"""

from __future__ import annotations

import numpy as np

from analysis.attribution.mixing import normalise_rows
from analysis.attribution.zeroing import cosine_distance
from analysis.core.forward import rerun_layer


def value_zeroing_layer_loop(model, layer: int, x, original) -> np.ndarray:
    """Raw distances [n, n] of one layer, one zeroed token per rerun."""
    n = x.shape[0]
    out = np.zeros((n, n))
    orig = np.asarray(original.detach().double().cpu())
    for j in range(n):
        new = rerun_layer(model, layer, x.unsqueeze(0), zero_values=[j])[0]
        out[:, j] = cosine_distance(new.double().numpy(), orig)
    return out


def value_zeroing_loop(model, hidden_states) -> np.ndarray:
    """[L, n, n] value zeroing, rows normalised, the loop way."""
    L = len(hidden_states) - 1
    return normalise_rows(np.stack([
        value_zeroing_layer_loop(model, layer, hidden_states[layer], hidden_states[layer + 1])
        for layer in range(L)]))


def attention_norms_direct(li) -> np.ndarray:
    """[n, n] ``||z_ij||`` forming every ``z_ij = sum_h A_h[i,j] W_O^h v_h(x_j)``."""
    H = li.probs.shape[0]
    n, D = li.values.shape
    dh = D // H
    out = np.zeros((n, n))
    v = li.values.numpy()
    w = li.w_o.numpy()
    a = li.probs.numpy()
    for i in range(n):
        for j in range(n):
            z = sum(a[h, i, j] * (w[:, h * dh:(h + 1) * dh] @ v[j, h * dh:(h + 1) * dh])
                    for h in range(H))
            out[i, j] = np.linalg.norm(z)
    return out
