"""Context mixing per layer from one forward's internals (docs/METHODS.md section 11).

For one example of n tokens and one BERT-style layer with input ``x`` [n, d], attention
probabilities ``A`` [H, n, n], value vectors ``v`` [n, H*dh] (bias included), output
projection ``W_O`` [d, H*dh] with bias ``b_O`` and the LayerNorm after the residual (``gamma``,
``beta``, ``eps``), every method gives an [n, n] matrix whose row i (the token being built)
holds the shares of the tokens j it draws from, rows summing to 1:

- ``attention``: mean over heads of A (raw weights);
- ``norm`` (Kobayashi et al. 2020): ``||z_ij||`` with ``z_ij = sum_h A_h[i,j] W_O^h v_h(x_j)``;
- ``norm_resln`` (Kobayashi et al. 2021, AttnResLn-N): ``||T_i(x_j)||`` with
  ``T_i(x_j) = g_i(z_ij + [i = j] x_i)`` and ``g_i(y) = gamma * (y - mean(y)) / s_i``, the
  LayerNorm's linear part for row i (``s_i = sqrt(var(pre-LN_i) + eps)``);
- ``alti`` (Ferrando et al. 2022): ``max(0, ||y_i||_1 - ||y_i - T_i(x_j)||_1)`` with
  ``y_i = sum_j T_i(x_j) + g_i(b_O) + beta`` the block's output.

Rows are normalised by :func:`normalise_rows`; :func:`rollout` aggregates layers. Every
matrix is computed in float64 (:func:`decomposed_mixing`): the norms through Gram matrices,
ALTI's L1 distances by one compiled loop that never stores them (:mod:`.l1`; in float32 with
float64 sums at ``precision="float32"``, the page's); :func:`decompose` forms the [n, n, d]
decomposition itself (the definition, used by the tests).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.attribution.l1 import EXACT, l1_distances

DECOMPOSED = ("norm", "norm_resln", "alti")


@dataclass
class LayerInputs:
    """What one layer's decomposition needs, for one example (torch tensors, CPU)."""

    x: object  # [n, d] the layer's input
    probs: object  # [H, n, n] attention probabilities
    values: object  # [n, H*dh] value vectors, bias included
    w_o: object  # [d, H*dh] attention output projection
    b_o: object  # [d]
    gamma: object  # [d] LayerNorm weight
    beta: object  # [d] LayerNorm bias
    eps: float


def layer_inputs(fw, parts, b: int = 0) -> list[LayerInputs]:
    """Per layer :class:`LayerInputs` of example ``b`` of a :class:`analysis.core.forward.Forward`
    run with ``hidden_states=True`` and ``capture=("value_vectors",)`` on the layers ``parts``
    (:func:`analysis.core.hooks.layer_parts`)."""
    n = fw.lengths[b]
    out = []
    for layer, part in enumerate(parts):
        out.append(LayerInputs(
            x=fw.hidden_states[layer][b, :n].detach().double().cpu(),
            probs=fw.attentions[layer][b, :, :n, :n].detach().double().cpu(),
            values=fw.captured["value_vectors"][layer][b, :n].detach().double().cpu(),
            w_o=part.dense.weight.detach().double().cpu(),
            b_o=(part.dense.bias.detach().double().cpu() if part.dense.bias is not None
                 else None),
            gamma=part.layer_norm.weight.detach().double().cpu(),
            beta=part.layer_norm.bias.detach().double().cpu(),
            eps=float(part.layer_norm.eps)))
    return out


def normalise_rows(m: np.ndarray) -> np.ndarray:
    """Each row divided by its sum; a row with nothing in it (sum 0) becomes the token
    itself (1 on the diagonal: no mixing), so every row sums to 1."""
    m = np.asarray(m, dtype=np.float64)
    s = m.sum(-1, keepdims=True)
    out = np.divide(m, s, out=np.zeros_like(m), where=s > 0)
    n = m.shape[-1]
    empty = np.broadcast_to((s <= 0), m.shape) & np.eye(n, dtype=bool)
    out[empty] = 1.0
    return out


def rollout(mats: np.ndarray, residual: bool) -> np.ndarray:
    """Aggregate [L, n, n] per-layer mixing through the layers: ``R_1 = M_1``,
    ``R_l = M_l R_(l-1)`` (rows: the token built, columns: input tokens). With ``residual``
    (Abnar & Zuidema 2020) each layer's matrix first becomes ``0.5 M + 0.5 I``, rows
    renormalised; without it (ALTI, value zeroing, norm_resln) the residual is already in
    ``M``."""
    mats = np.asarray(mats, dtype=np.float64)
    L, n, _ = mats.shape
    out = np.empty_like(mats)
    prev = None
    for layer in range(L):
        m = mats[layer]
        if residual:
            m = normalise_rows(0.5 * m + 0.5 * np.eye(n))
        prev = m if prev is None else m @ prev
        out[layer] = prev
    return out


def head_mean(probs) -> np.ndarray:
    """Raw attention: the mean over heads [n, n] of A [H, n, n]."""
    return normalise_rows(np.asarray(probs, dtype=np.float64).mean(0))


def _head_vectors(li: LayerInputs, dtype=None):
    """f_h(x_j) = W_O^h v_h(x_j) for every head and token: [H, n, d] (in ``dtype``, default
    the inputs' float64)."""
    # lazy: imported when used: torch (heavy)
    import torch

    H = li.probs.shape[0]
    n, D = li.values.shape
    vh = li.values.reshape(n, H, D // H).to(dtype or li.values.dtype)
    wo = li.w_o.reshape(li.w_o.shape[0], H, D // H).to(dtype or li.w_o.dtype)
    return torch.einsum("jhe,dhe->hjd", vh, wo)


def _centred(a):
    return a - a.mean(-1, keepdim=True)


def _ln_part(y, scale, gamma):
    """g(y) = gamma * (y - mean(y)) / scale (the LayerNorm's linear part)."""
    return gamma * _centred(y) / scale


def pre_ln(li: LayerInputs):
    """The input of the LayerNorm: ``sum_j z_ij + b_O + x_i`` [n, d], computed as
    ``W_O (sum_j A_h[i,j] v_h(x_j))_h + b_O + x_i`` (the mix of values first, then the output
    projection: ``n^2 d + n d^2`` products instead of ``H n^2 d``)."""
    # lazy: imported when used: torch (heavy)
    import torch

    H = li.probs.shape[0]
    n, D = li.values.shape
    ctx = torch.bmm(li.probs, li.values.reshape(n, H, D // H).permute(1, 0, 2))  # [H, n, dh]
    wo = li.w_o.reshape(li.w_o.shape[0], H, D // H)
    out = torch.einsum("hie,dhe->id", ctx, wo) + li.x
    return out + li.b_o if li.b_o is not None else out


def decompose(li: LayerInputs, rows=None, f=None, dtype=None):
    """Kobayashi et al. 2021 / Ferrando et al. 2022 decomposition of the attention block's
    output for ``rows`` (default all): returns ``(T, rest, scale)`` with ``T`` [r, n, d] the
    per-source vectors ``T_i(x_j) = g_i(z_ij + [i=j] x_i)``, ``rest`` [r, d] the part no token
    owns ``g_i(b_O) + beta``, ``scale`` [r, 1] the LayerNorm's ``s_i``; then
    ``T.sum(1) + rest`` is the block's output LN(pre-LN). ``T`` is computed in ``dtype``
    (default float64; the mixing matrices use float32, whose [r, n, d] products are several
    times faster)."""
    # lazy: imported when used: torch (heavy)
    import torch

    f = _head_vectors(li) if f is None else f
    n = li.x.shape[0]
    rows = torch.arange(n) if rows is None else torch.as_tensor(rows)
    p = pre_ln(li)[rows]
    scale = torch.sqrt(p.var(-1, unbiased=False, keepdim=True) + li.eps)  # [r, 1]
    dt = dtype or torch.float64
    z = sent(li.probs[:, rows].to(dt), f.to(dt)).permute(1, 0, 2).contiguous()  # [r, n, d]
    z[torch.arange(len(rows)), rows] += li.x[rows].to(dt)
    T = _ln_part(z, scale.unsqueeze(-1).to(dt), li.gamma.to(dt))
    bias = li.b_o if li.b_o is not None else torch.zeros_like(li.beta)
    rest = _ln_part(bias.expand(len(rows), -1), scale, li.gamma) + li.beta
    return T, rest.to(dt), scale


def sent(probs, f):
    """``z[j, i] = sum_h A_h[i, j] f_h(x_j)`` [n_j, r, d] for attention rows ``probs``
    [H, r, n] and head vectors ``f`` [H, n, d]: one batched matrix product over the sources j
    (torch.einsum picks a path several times slower for this contraction, and bmm over
    permuted views is ~50x slower than copying them contiguous first)."""
    # lazy: imported when used: torch (heavy)
    import torch

    return torch.bmm(probs.permute(2, 1, 0).contiguous(), f.permute(1, 0, 2).contiguous())


def attention_norms(li: LayerInputs, f=None) -> np.ndarray:
    """Kobayashi et al. 2020, all heads together: ``||z_ij|| = ||sum_h A_h[i,j] f_h(x_j)||``
    [n, n] (unnormalised), through the Gram matrix ``G_j[h, k] = <f_h(x_j), f_k(x_j)>``:
    ``||z_ij||^2 = sum_hk A_h[i,j] A_k[i,j] G_j[h, k]`` (float64, no [n, n, d] product)."""
    f = _head_vectors(li) if f is None else f
    return _quadratic(li.probs, f).clamp_min(0.0).sqrt().numpy()


def _quadratic(probs, f):
    """``q[i, j] = sum_hk A_h[i,j] A_k[i,j] <f_h(x_j), f_k(x_j)>`` [n, n] for ``probs`` A
    [H, n, n] and vectors ``f`` [H, n, d]: the Gram matrix of each source's H vectors, then
    one batched product over the sources (faster than the three-way einsum)."""
    # lazy: imported when used: torch (heavy)
    import torch

    fj = f.permute(1, 0, 2).contiguous()  # [n_j, H, d]
    a = probs.permute(2, 1, 0).contiguous()  # [n_j, n_i, H]
    return (torch.bmm(a, torch.bmm(fj, fj.transpose(1, 2))) * a).sum(-1).T


def decomposed_mixing(li: LayerInputs, names=DECOMPOSED, precision: str = EXACT
                      ) -> dict[str, np.ndarray]:
    """The [n, n] matrices of ``names`` (among ``norm``, ``norm_resln``, ``alti``) for one
    layer, row-normalised, in float64 without forming the decomposition ``T`` of
    :func:`decompose`. Write ``u_h(x_j) = gamma * (f_h(x_j) - mean)`` and ``r_i = gamma *
    (x_i - mean)``; then ``s_i T_i(x_j) = sum_h A_h[i,j] u_h(x_j) + [i = j] r_i``, so

    - ``norm_resln``: ``||T_i(x_j)||^2`` is a quadratic form in the H weights ``A_h[i,j]``
      with the Gram matrix of the ``u_h(x_j)`` (plus ``r_i``'s terms on the diagonal):
      ``n H^2 d + n^2 H^2`` products instead of ``n^2 d``;
    - ``alti``: ``||y_i - T_i(x_j)||_1 = ||s_i y_i - sum_h A_h[i,j] u_h(x_j)||_1 / s_i``
      (the diagonal corrected by ``r_i``): :func:`analysis.attribution.l1.l1_distances`, each
      distance summed as it is made, in ``precision`` (float64, or float32 summed in
      float64: within ~1e-7 of float64, docs/METHODS.md section 20).
    """
    # lazy: imported when used: torch (heavy)
    import torch

    # ALTI alone at float32: its head vectors in float32 too (within the same error)
    alone = precision != EXACT and not {"norm", "norm_resln"} & set(names)
    f = _head_vectors(li, torch.float32 if alone else torch.float64)
    n, d = li.x.shape
    out = {}
    if "norm" in names:
        out["norm"] = attention_norms(li, f)
    if "norm_resln" in names or "alti" in names:
        pre = pre_ln(li)
        scale = torch.sqrt(pre.var(-1, unbiased=False, keepdim=True) + li.eps)  # [n, 1]
        u = li.gamma.to(f.dtype) * _centred(f)  # [H, n, d]
        r = li.gamma * _centred(li.x)  # [n, d]
        idx = torch.arange(n)
        own = li.probs[:, idx, idx]  # [H, n]: A_h[i, i]
    if "norm_resln" in names:
        sq = _quadratic(li.probs, u)
        sq[idx, idx] += 2 * torch.einsum("hi,hid,id->i", own, u, r) + (r * r).sum(-1)
        out["norm_resln"] = (sq.clamp_min(0.0).sqrt() / scale).numpy()
    if "alti" in names:
        y = _ln_part(pre, scale, li.gamma) + li.beta  # [n, d]: the block's output
        sy = scale * y
        dist = torch.from_numpy(l1_distances(li.probs.numpy(), u.numpy(), sy.numpy(),
                                             precision))
        mix = torch.einsum("hi,hid->id", own.to(u.dtype), u).double()
        dist[idx, idx] = (sy - mix - r).abs().sum(-1)
        ynorm = y.abs().sum(-1, keepdim=True)
        out["alti"] = (ynorm - dist / scale).clamp_min(0.0).numpy()
    return {k: normalise_rows(v) for k, v in out.items()}
