"""Per-head statistics of attention maps (docs/METHODS.md sections 3 and 4): core, used by the
No-op study (its corpus statistics) and the Drift study (the no-op drift).

For one example with n tokens and a map ``A[l, h, i, j]`` (row i sums to 1), with ``S`` a 0/1
selector on keys (Clark et al. 2019, token level):

- ``cls`` / ``sep`` / ``punct``: ``(1/n) sum_i sum_j A[i,j] S[j]`` with S = [CLS], every [SEP],
  punctuation tokens ("." and "," by default);
- ``self`` = ``(1/n) sum_i A[i,i]``, ``prev`` = ``(1/n) sum_i A[i,i-1]``,
  ``next`` = ``(1/n) sum_i A[i,i+1]``;
- ``entropy`` = ``(1/n) sum_i -sum_j A[i,j] log A[i,j]`` (nats, 0 log 0 = 0); ``entropy_cls`` is
  row 0 ([CLS]) only.

Attention norms (Kobayashi et al. 2020): with ``||f(x_j)||`` the size of what key j moves, per
row the norm-weighted attention becomes shares ``A[i,j] ||f(x_j)|| / sum_k A[i,k] ||f(x_k)||``,
summarised with the same selectors: ``norm_cls``, ``norm_sep``, ``norm_punct``.

:func:`example_stats` / :func:`example_norm_stats` are the plain numpy definitions for one map;
:func:`batch_stats` gives the same numbers for a whole padded batch at once (torch, row masks).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

PUNCT = (".", ",")
WEIGHT_METRICS = ("cls", "sep", "punct", "self", "prev", "next", "entropy", "entropy_cls")
NORM_METRICS = ("norm_cls", "norm_sep", "norm_punct")
CLI_METRICS = ("cls", "sep", "punct", "self", "prev", "next", "entropy")
CATEGORIES = ("sep", "cls", "punct", "other")
KEY_SETS = ("cls", "sep", "punct")

LABELS = {
    "cls": "attention to [CLS]",
    "sep": "attention to [SEP]",
    "punct": "attention to . and ,",
    "self": "attention to the token itself",
    "prev": "attention to the previous token",
    "next": "attention to the next token",
    "entropy": "attention entropy (nats)",
    "entropy_cls": "entropy of [CLS]'s attention (nats)",
    "norm_cls": "norm share to [CLS]",
    "norm_sep": "norm share to [SEP]",
    "norm_punct": "norm share to . and ,",
}


def selectors(encoding, punct: Sequence[str] = PUNCT) -> dict[str, np.ndarray]:
    """Boolean masks over an example's tokens: ``cls`` (the leading special token), ``sep``
    (every special token equal to the final one: all [SEP]s, RoBERTa's </s>s), ``punct``
    (non-special tokens whose text is one of ``punct``), ``other`` (everything else)."""
    tokens = np.asarray(encoding.tokens, dtype=object)
    special = np.asarray(encoding.special, dtype=bool)
    n = len(tokens)
    cls = np.zeros(n, dtype=bool)
    sep = np.zeros(n, dtype=bool)
    if n and special[0]:
        cls = special & (tokens == tokens[0])
        cls[1:] = False  # only the leading one is [CLS]
    if n and special[-1] and not (n == 1 and cls[0]):
        sep = special & (tokens == tokens[-1])
        sep &= ~cls
    pset = set(punct)
    pmask = np.array([(not s) and (t in pset) for t, s in zip(tokens, special)], dtype=bool)
    other = ~(cls | sep | pmask)
    return {"cls": cls, "sep": sep, "punct": pmask, "other": other}


# ---------------------------------------------------------------------------------------------
# One example, plain numpy (the definition)


def example_stats(attn: np.ndarray, encoding,
                  punct: Sequence[str] = PUNCT) -> dict[str, np.ndarray]:
    """Statistics of one example's map ``attn`` [L, H, n, n] -> {name: [L, H] float64}."""
    a = np.asarray(attn, dtype=np.float64)
    if a.ndim != 4 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"attention must be [L, H, n, n], got shape {a.shape}")
    n = a.shape[-1]
    if n != len(encoding.tokens):
        raise ValueError(f"map has {n} tokens but the encoding has {len(encoding.tokens)}")
    sel = selectors(encoding, punct)
    col = a.sum(axis=2)  # [L, H, n]: sum over queries i of A[i, j]
    out = {name: (col * sel[name]).sum(-1) / n for name in KEY_SETS}
    out["self"] = np.trace(a, axis1=2, axis2=3) / n
    out["prev"] = np.diagonal(a, offset=-1, axis1=2, axis2=3).sum(-1) / n
    out["next"] = np.diagonal(a, offset=1, axis1=2, axis2=3).sum(-1) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(a > 0, a * np.log(np.where(a > 0, a, 1.0)), 0.0)
    ent_rows = -plogp.sum(-1)  # [L, H, n]
    out["entropy"] = ent_rows.mean(-1)
    out["entropy_cls"] = ent_rows[..., 0]
    return out


def example_norm_stats(attn: np.ndarray, fnorm: np.ndarray, encoding,
                       punct: Sequence[str] = PUNCT) -> dict[str, np.ndarray]:
    """Kobayashi norm shares for one example: ``attn`` [L,H,n,n], ``fnorm`` [L,H,n] =
    ||f(x_j)|| per layer, head and key token."""
    a = np.asarray(attn, dtype=np.float64)
    w = a * np.asarray(fnorm, dtype=np.float64)[:, :, None, :]  # ||A[i,j] f(x_j)||
    tot = w.sum(-1, keepdims=True)
    share = np.divide(w, tot, out=np.zeros_like(w), where=tot > 0)
    n = a.shape[-1]
    sel = selectors(encoding, punct)
    col = share.sum(axis=2)
    return {f"norm_{k}": (col * sel[k]).sum(-1) / n for k in KEY_SETS}


# ---------------------------------------------------------------------------------------------
# A padded batch at once, torch


def _batch_selectors(encodings, N: int, punct):
    """Padded key selectors [B, N] (float) and lengths for a batch."""
    B = len(encodings)
    sel = {k: np.zeros((B, N), dtype=np.float32) for k in KEY_SETS}
    lengths = np.zeros(B, dtype=np.int64)
    for b, enc in enumerate(encodings):
        s = selectors(enc, punct)
        n = len(enc.tokens)
        lengths[b] = n
        for k in sel:
            sel[k][b, :n] = s[k]
    return sel, lengths


def _wanted(metrics: Sequence[str], norms: bool) -> list[str]:
    unknown = set(metrics) - set(WEIGHT_METRICS)
    if unknown:
        raise ValueError(f"Unknown statistics {sorted(unknown)}: use {WEIGHT_METRICS}.")
    return [m for m in WEIGHT_METRICS if m in set(metrics)] + (list(NORM_METRICS) if norms else [])


def batch_stats(attentions, encodings, punct=PUNCT, fnorms=None,
                metrics: Sequence[str] = WEIGHT_METRICS) -> dict[str, "np.ndarray"]:
    """Statistics of a padded batch at once: ``attentions`` is the model's tuple of L tensors
    [B, H, N, N] (post-softmax; padded keys carry 0), ``encodings`` the batch's examples.
    Returns {name: [B, L, H] float64} per example, equal to :func:`example_stats` on each
    cropped map, for the ``metrics`` asked (a subset of WEIGHT_METRICS; the rest is not
    computed). ``fnorms`` (list of [B, H, N]) adds the norm shares."""
    import torch  # lazy: torch takes seconds to import; the CLI checks its input first

    N = attentions[0].shape[-1]
    sel_np, lengths = _batch_selectors(encodings, N, punct)
    sel = {k: torch.from_numpy(v) for k, v in sel_np.items()}
    n = torch.from_numpy(lengths).double()[:, None]  # [B, 1]
    rows = (torch.arange(N)[None, :] < torch.from_numpy(lengths)[:, None]).float()  # [B, N]
    rows_h = rows[:, None, :]  # [B, 1, N] real queries
    names = _wanted(metrics, fnorms is not None)
    want = set(names)
    out = {k: [] for k in names}

    def key_shares(a, prefix=""):
        """(1/n) sum_i sum_j a[i,j] S[j] for the key sets asked."""
        col = torch.einsum("bhij,bi->bhj", a, rows)  # [B, H, N]
        for k in KEY_SETS:
            if prefix + k in want:
                out[prefix + k].append((col * sel[k][:, None, :]).sum(-1).double() / n)

    for li, a in enumerate(attentions):
        a = a.float()
        if want & set(KEY_SETS):
            key_shares(a)
        if "self" in want:
            diag = torch.diagonal(a, dim1=-2, dim2=-1)  # [B, H, N]
            out["self"].append((diag * rows_h).sum(-1).double() / n)
        if "prev" in want:
            below = torch.diagonal(a, offset=-1, dim1=-2, dim2=-1)  # A[i, i-1], i = 1..N-1
            out["prev"].append((below * rows_h[..., 1:]).sum(-1).double() / n)
        if "next" in want:
            above = torch.diagonal(a, offset=1, dim1=-2, dim2=-1)  # A[i, i+1], i = 0..N-2
            out["next"].append((above * rows_h[..., 1:]).sum(-1).double() / n)
        if want & {"entropy", "entropy_cls"}:
            ent = -torch.xlogy(a, a).sum(-1)  # [B, H, N] row entropies (0 log 0 = 0)
            if "entropy" in want:
                out["entropy"].append((ent * rows_h).sum(-1).double() / n)
            if "entropy_cls" in want:
                out["entropy_cls"].append(ent[..., 0].double())
        if fnorms is not None:
            w = a * fnorms[li][:, :, None, :].float()
            tot = w.sum(-1, keepdim=True)
            key_shares(torch.where(tot > 0, w / torch.where(tot > 0, tot, 1.0), 0.0), "norm_")
    return {k: torch.stack(v, dim=1).numpy() for k, v in out.items()}  # [B, L, H]
