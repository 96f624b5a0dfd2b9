"""Value zeroing (Mohebbi et al. 2023; docs/METHODS.md section 11), batched.

In layer l, zero token j's value vectors in every head, run that layer again on the same
inputs, and score how much each token i's output moved: the cosine distance between its
original and its new output. Row i (over j) is normalised to sum to 1. All n zeroings of a
layer run as ONE batched pass of that layer (batch element b zeroes token b; in blocks of
:func:`block_size` copies when n is large), through :func:`analysis.forward.rerun_layer`.
The one-token-at-a-time loop, the paper's own procedure, is kept as the reference in
``bench/reference_attribution.py``.
"""

from __future__ import annotations

import numpy as np

from analysis.attribution.mixing import normalise_rows
from analysis.forward import rerun_layer

BUDGET_BYTES = 256 * 2 ** 20  # the float32 activations one block of copies may hold


def block_size(n: int, config) -> int:
    """How many zeroed copies of an n-token input one pass holds: a copy's activations are
    about ``4 n (max(intermediate, 4 d) + 2 H n)`` bytes (feed-forward or projections, plus
    attention scores and probabilities)."""
    inter = int(getattr(config, "intermediate_size", 4 * config.hidden_size))
    per_copy = 4 * n * (max(inter, 4 * config.hidden_size) + 2 * config.num_attention_heads * n)
    return max(1, min(n, BUDGET_BYTES // max(1, per_copy)))


def cosine_distance(a, b) -> np.ndarray:
    """1 - cos(a, b) along the last axis (float64; 0 where either vector is zero)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    na, nb = np.linalg.norm(a, axis=-1), np.linalg.norm(b, axis=-1)
    dot = (a * b).sum(-1)
    cos = np.divide(dot, na * nb, out=np.ones_like(dot), where=(na * nb) > 0)
    return np.clip(1.0 - cos, 0.0, 2.0)


def value_zeroing_layer(model, layer: int, x, original, attention_mask=None) -> np.ndarray:
    """Raw (unnormalised) value-zeroing distances [n, n] of one layer: entry [i, j] is the
    cosine distance between token i's original output ``original`` [n, d] and its output when
    token j's values are zeroed; the layer input ``x`` [n, d] (torch)."""
    n = x.shape[0]
    step = block_size(n, model.config)
    out = np.zeros((n, n))
    orig = np.asarray(original.detach().double().cpu())
    for start in range(0, n, step):
        js = list(range(start, min(n, start + step)))
        batch = x.unsqueeze(0).expand(len(js), -1, -1).contiguous()
        new = rerun_layer(model, layer, batch, zero_values=js, attention_mask=attention_mask)
        out[:, js] = cosine_distance(new.double().numpy(), orig[None]).T  # [n, len(js)]
    return out


def value_zeroing(model, hidden_states) -> np.ndarray:
    """[L, n, n] value-zeroing mixing (rows normalised) from one example's hidden states
    ``hidden_states`` (L + 1 tensors [n, d]: the embeddings, then each layer's output)."""
    L = len(hidden_states) - 1
    mats = [value_zeroing_layer(model, layer, hidden_states[layer], hidden_states[layer + 1])
            for layer in range(L)]
    return normalise_rows(np.stack(mats))
