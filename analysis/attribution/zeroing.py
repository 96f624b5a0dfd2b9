"""Value zeroing (Mohebbi et al. 2023; docs/METHODS.md section 11), batched.

In layer l, zero token j's value vectors in every head, run that layer again on the same
inputs, and score how much each token i's output moved: the cosine distance between its
original and its new output. Row i (over j) is normalised to sum to 1.

All n zeroings of a layer run as ONE batched pass (in blocks of :func:`block_size` copies when
n is large). Zeroing token j's values changes only the attention's weighted sum of values, so
the attention block's LayerNorm input of token i becomes ``p_i - z_ij`` exactly (``p_i`` the
original input, ``z_ij = sum_h A_h[i,j] W_O^h v_h(x_j)`` what j sent, both from the one
forward): :func:`value_zeroing_layer` builds those n x n inputs and runs only the rest of the
layer (LayerNorm, feed-forward block) on them, through
:func:`analysis.core.forward.rerun_after_attention`. :func:`value_zeroing_layer_rerun` runs the
whole layer on n copies of its input with a hook zeroing the values
(:func:`analysis.core.forward.rerun_layer`); the paper's one-token-at-a-time loop is kept as the
reference in ``bench/references/attribution.py``. All three agree (tested).
"""

from __future__ import annotations

import numpy as np

from analysis.attribution.mixing import _head_vectors, normalise_rows, pre_ln, sent
from analysis.core.forward import rerun_after_attention, rerun_layer

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


def value_zeroing_layer(model, layer: int, li, original) -> np.ndarray:
    """Raw (unnormalised) value-zeroing distances [n, n] of one layer: entry [i, j] is the
    cosine distance between token i's original output ``original`` [n, d] and its output when
    token j's values are zeroed, from the layer's :class:`analysis.attribution.mixing.
    LayerInputs` ``li`` (see the module docstring)."""
    # lazy: imported when used: torch (heavy)
    import torch

    n = li.x.shape[0]
    step = block_size(n, model.config)
    f = _head_vectors(li, torch.float32)  # [H, n, d]
    p = pre_ln(li).float()  # [n, d]
    probs = li.probs.float()
    out = np.zeros((n, n))
    orig = np.asarray(original.detach().double().cpu())
    for start in range(0, n, step):
        js = torch.arange(start, min(n, start + step))
        z = sent(probs[:, :, js], f[:, js])  # [c, n, d]: what j sent i
        new = rerun_after_attention(model, layer, p.unsqueeze(0) - z)
        out[:, js.numpy()] = cosine_distance(new.double().numpy(), orig[None]).T
    return out


def value_zeroing_layer_rerun(model, layer: int, x, original, attention_mask=None
                              ) -> np.ndarray:
    """The same distances by rerunning the whole layer on n copies of its input ``x`` [n, d]
    (copy b zeroes token b's values by a hook); ``attention_mask``: an additive mask."""
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


def value_zeroing(model, layer_inputs, hidden_states) -> np.ndarray:
    """[L, n, n] value-zeroing mixing (rows normalised) of one example from its per-layer
    :class:`analysis.attribution.mixing.LayerInputs` and hidden states (L + 1 tensors [n, d]:
    the embeddings, then each layer's output)."""
    mats = [value_zeroing_layer(model, layer, li, hidden_states[layer + 1])
            for layer, li in enumerate(layer_inputs)]
    return normalise_rows(np.stack(mats))
