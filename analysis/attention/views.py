"""Compact payloads for the interactive attention views (head view, model view).

The browser gets only what one view shows, quantised to 8 bits and base64-encoded:

- head view: one layer's ``[H, n, n]`` map, either dense (``H*n*n`` bytes) or, for long
  inputs, sparse edges (the ``top_k`` strongest keys of every query row of every head and/or
  the weights ``>= threshold``): per row a count (uint16), per edge a key index (uint16) and
  a weight (uint8). The encoding with fewer bytes is chosen.
- model view: every layer x head as a small thumbnail (max-pooled to at most
  ``max_size x max_size``), 8 bits per cell.

A weight ``w`` in [0, 1] is sent as ``q = round(w * 255)``; the view draws ``q / 255``, so
every weight is within ``0.5/255`` of the map. Token labels are plain strings (the views
render them as text nodes, never as HTML). Pure numpy; no streamlit.

BertViz, by comparison, sends every layer and head of the input as full-precision JSON floats.
Encoding and pooling: docs/METHODS.md section 2. Every key of every payload, its type and shape:
:mod:`analysis.attention.payload_spec` (the contract the UI's Python and JavaScript checks read).
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Sequence

import numpy as np

from analysis.attention.payload_spec import HEAD, MODEL, PAYLOAD_VERSION, SCALE, VIEWS, \
    VIEWS_VERSION

__all__ = ["PAYLOAD_VERSION", "SCALE", "VIEWS_BUDGET", "VIEWS_VERSION", "head_view_payload",
           "heatmap_payload", "kept_keys", "model_view_payload", "pool_map", "quantise",
           "views_payload"]


def _b64(array: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(array).tobytes()).decode("ascii")


QUANTISE_BLOCK = 1 << 16  # float32 weights a block: 256 KB, which stays in a core's cache


def quantise(weights: np.ndarray) -> np.ndarray:
    """Weights in [0, 1] -> uint8 ``round(w * 255)`` (values outside are clipped; NaN -> 0).

    float32 maps (every model's) are scaled in float32, a block of ``QUANTISE_BLOCK`` weights
    at a time, whose few working copies stay in the processor's cache (a 512-token pair of a
    24 x 16 model is 100M weights: whole-array passes took 0.5-2.5 s, mostly memory traffic
    and fresh pages; blocks take 0.16 s); the few products within 1e-5 of a rounding
    boundary, where float32's rounding of ``w * 255`` could land on the other side, are redone
    in float64, so the bytes are those of the float64 formula
    (tests/unit/test_views_quantise.py)."""
    weights = np.asarray(weights)
    if weights.dtype != np.float32:
        w = np.nan_to_num(np.asarray(weights, dtype=np.float64), nan=0.0)
        return np.rint(np.clip(w, 0.0, 1.0) * SCALE).astype(np.uint8)
    flat = weights.reshape(-1)
    out = np.empty(flat.size, dtype=np.uint8)
    for start in range(0, flat.size, QUANTISE_BLOCK):
        block = flat[start:start + QUANTISE_BLOCK]
        out[start:start + block.size] = _quantise_float32(block)
    return out.reshape(weights.shape)


def _quantise_float32(weights: np.ndarray) -> np.ndarray:
    p = np.multiply(weights, np.float32(SCALE), dtype=np.float32)  # the one working copy
    np.fmax(p, np.float32(0), out=p)  # fmax / fmin: NaN -> 0 (and clip(w, 0, 1) * 255,
    np.fmin(p, np.float32(SCALE), out=p)  # 255 * 1 being exact)
    q = np.rint(p)
    np.subtract(p, q, out=p)  # in place: | |p - q| - 0.5 |
    np.abs(p, out=p)
    np.subtract(p, np.float32(0.5), out=p)
    np.abs(p, out=p)
    near = p <= np.float32(1e-5)
    if near.any():  # exact products: a float32 times 255 is exact in float64
        w = np.nan_to_num(weights[near].astype(np.float64), nan=0.0)
        q[near] = np.rint(np.clip(w, 0.0, 1.0) * SCALE)
    return q


def _check_layer(labels, maps, segments, special) -> tuple[np.ndarray, int, int]:
    maps = np.asarray(maps)
    if maps.ndim != 3 or maps.shape[1] != maps.shape[2]:
        raise ValueError(f"maps must be one layer's [heads, n, n] array, got shape {maps.shape}.")
    n_heads, n = maps.shape[0], maps.shape[1]
    if n_heads < 1 or n < 1:
        raise ValueError("maps is empty: no heads or no tokens.")
    for name, seq in (("labels", labels), ("segments", segments), ("special", special)):
        if len(seq) != n:
            raise ValueError(f"{name} has {len(seq)} entries but the map has {n} tokens.")
    return maps, n_heads, n


def top_k_mask(values: np.ndarray, k: int) -> np.ndarray:
    """Boolean mask of the ``k`` largest entries of every row (last axis) of ``values``, ties
    broken by the lower index: the cells ``np.argsort(-values, kind="stable")[..., :k]``
    names, without sorting. Each row's k-th largest value comes from ``np.partition``; the
    cells above it are kept, then the cells equal to it from the left until the row has k."""
    values = np.asarray(values)
    n = values.shape[-1]
    k = int(k)
    if k >= n:
        return np.ones(values.shape, dtype=bool)
    if k < 1:
        return np.zeros(values.shape, dtype=bool)
    kth = np.partition(values, n - k, axis=-1)[..., n - k:n - k + 1]
    keep = values > kth
    tie = values == kth
    need = k - keep.sum(-1, keepdims=True, dtype=np.int64)
    rank = np.cumsum(tie, axis=-1, dtype=np.uint16 if n < 65535 else np.int64)
    keep |= tie & (rank <= need)
    return keep


def kept_keys(maps: np.ndarray, top_k: int | None = None, threshold: float = 0.0) -> np.ndarray:
    """Boolean ``[H, n, n]`` mask of the (query, key) cells a head view keeps.

    ``top_k``: the k largest keys of every row (ties broken by the lower key index);
    ``threshold``: weights ``>= threshold``. Both given: both conditions hold. Neither
    (``top_k=None, threshold=0``): every cell.
    """
    maps = np.asarray(maps)
    keep = np.ones(maps.shape, dtype=bool)
    if top_k is not None:
        top_k = int(top_k)
        if top_k < 1:
            raise ValueError(f"top_k must be at least 1, got {top_k}.")
        keep = top_k_mask(maps, top_k)  # equal weights keep the lower key index first
    if threshold and threshold > 0:
        keep &= maps >= threshold
    return keep


def head_view_payload(labels: list[str], maps: np.ndarray, segments: np.ndarray,
                      special: np.ndarray, *, layer: int, is_pair: bool,
                      top_k: int | None = None, threshold: float = 0.0,
                      highlight: Sequence[int] = ()) -> dict:
    """JSON-ready payload of one layer for the head view.

    ``maps``: one layer's ``[H, n, n]`` map (rows sum to 1), already at the level shown
    (token or word, specials hidden or not). ``segments``: 0 = A, 1 = B per label;
    ``special``: True for [CLS]/[SEP]-like labels. ``layer`` is 0-indexed. ``highlight``:
    positions drawn as marked (e.g. the gold words of an aspect head).
    """
    maps, n_heads, n = _check_layer(labels, maps, segments, special)
    marked = sorted({int(i) for i in highlight})
    if marked and not 0 <= marked[0] <= marked[-1] < n:
        raise ValueError(f"highlight positions must lie in 0..{n - 1}, got {marked}.")
    if not 0.0 <= float(threshold) <= 1.0:
        raise ValueError(f"threshold must be between 0 and 1, got {threshold}.")
    if n > 65535:
        raise ValueError("The head view supports at most 65535 tokens.")
    q = quantise(maps)
    payload = {
        "view": HEAD.kind,
        "version": HEAD.version,
        "layer": int(layer),
        "n_heads": int(n_heads),
        "n": int(n),
        "labels": [str(label) for label in labels],
        "segments": [int(s) for s in np.asarray(segments).astype(int)],
        "special": [int(bool(s)) for s in np.asarray(special)],
        "is_pair": bool(is_pair),
        "top_k": None if top_k is None else int(top_k),
        "threshold": float(threshold),
        "scale": SCALE,
        "highlight": marked,
    }
    keep = kept_keys(maps, top_k, threshold)
    n_edges = int(keep.sum())
    dense_bytes = n_heads * n * n
    sparse_bytes = 2 * n_heads * n + 3 * n_edges
    if keep.all() or dense_bytes <= sparse_bytes:
        # dense: dropped cells (if any) are sent as 0
        payload["encoding"] = "dense"
        payload["weights"] = _b64(np.where(keep, q, 0).astype(np.uint8))
    else:
        # sparse: rows in (head, query) order; keys ascending within a row
        counts = keep.sum(-1).astype("<u2")  # [H, n]
        _, _, keys = np.nonzero(keep)
        payload["encoding"] = "sparse"
        payload["counts"] = _b64(counts)
        payload["keys"] = _b64(keys.astype("<u2"))
        payload["weights"] = _b64(q[keep])
    payload["n_edges"] = n_edges
    return payload


def _bins(n: int, size: int) -> np.ndarray:
    """Start index of each of ``size`` near-equal bins over ``n`` cells."""
    return (np.arange(size) * n) // size


def pool_map(maps: np.ndarray, size: int, how: str = "max") -> np.ndarray:
    """Downsample the last two axes of ``[..., n, n]`` to ``[..., s, s]`` with
    ``s = min(n, size)`` by max (or mean) over near-equal blocks; unchanged when n <= size."""
    maps = np.asarray(maps, dtype=np.float32)
    n = maps.shape[-1]
    if n <= size:
        return maps
    starts = _bins(n, size)
    reduce = np.maximum.reduceat if how == "max" else np.add.reduceat
    out = reduce(reduce(maps, starts, axis=-1), starts, axis=-2)
    if how == "mean":
        widths = np.diff(np.append(starts, n))
        out = out / np.outer(widths, widths)
    elif how != "max":
        raise ValueError(f"Unknown pooling {how!r}: use 'max' or 'mean'.")
    return out


def model_view_payload(maps: np.ndarray, *, max_size: int = 32) -> dict:
    """JSON-ready payload for the model view: every ``[L, H]`` head as a max-pooled
    thumbnail of at most ``max_size x max_size`` cells, 8 bits per cell."""
    maps = np.asarray(maps)
    if maps.ndim != 4 or maps.shape[-1] != maps.shape[-2]:
        raise ValueError(f"maps must be [layers, heads, n, n], got shape {maps.shape}.")
    if max_size < 1:
        raise ValueError(f"max_size must be at least 1, got {max_size}.")
    n_layers, n_heads, n = maps.shape[0], maps.shape[1], maps.shape[2]
    thumbs = pool_map(maps, int(max_size), "max")
    size = thumbs.shape[-1]
    return {
        "view": MODEL.kind,
        "version": MODEL.version,
        "n_layers": int(n_layers),
        "n_heads": int(n_heads),
        "n": int(n),
        "size": int(size),
        "pool": "max" if n > size else "none",
        "scale": SCALE,
        "thumbs": _b64(quantise(thumbs)),
    }


# ---- every layer at once: the Attention page's one component (head view, model view, heatmap)

VIEWS_BUDGET = 2_000_000  # bytes of JSON for a whole payload (a 512-token pair included)


def _b64_len(n_bytes: int) -> int:
    return 4 * ((int(n_bytes) + 2) // 3)


def _sparse_bytes(nonzero: np.ndarray, k: int) -> int:
    """Base64 bytes of every layer's sparse arrays with at most ``k`` edges per row:
    ``nonzero`` is ``[L, H, n]`` (cells a row has with q > 0)."""
    n_layers, n_heads, n = nonzero.shape
    edges = np.minimum(nonzero, k).reshape(n_layers, -1).sum(-1)
    return int(sum(_b64_len(2 * n_heads * n) + _b64_len(2 * e) + _b64_len(e) for e in edges))


def views_payload(labels: list[str], maps: np.ndarray, segments: np.ndarray,
                  special: np.ndarray, *, is_pair: bool, budget: int = VIEWS_BUDGET,
                  thumb_size: int = 32) -> dict:
    """JSON-ready payload of EVERY layer for the Attention page's component (head view and
    model view switch layers, heads, segments and the pinned token in the browser).

    ``maps``: ``[L, H, n, n]`` at the level shown. Weights are 8-bit (``q = round(w*255)``).
    Dense (``L*H*n*n`` bytes) when the whole payload then fits ``budget`` bytes of JSON;
    else sparse: per row of every head the ``k`` largest keys with ``q > 0`` (ties: lower key
    first), ``k`` the largest that fits the budget (``top_k`` in the payload). Per layer,
    sparse is a uint16 count per row, a uint16 key and a uint8 weight per edge.
    """
    maps = np.asarray(maps)
    if maps.ndim != 4 or maps.shape[-1] != maps.shape[-2]:
        raise ValueError(f"maps must be [layers, heads, n, n], got shape {maps.shape}.")
    n_layers, n_heads, n = maps.shape[0], maps.shape[1], maps.shape[2]
    _check_layer(labels, maps[0], segments, special)
    if n > 65535:
        raise ValueError("The views support at most 65535 tokens.")
    q = quantise(maps)
    model = model_view_payload(maps, max_size=thumb_size)
    payload = {
        "view": VIEWS.kind, "version": VIEWS.version,
        "n_layers": int(n_layers), "n_heads": int(n_heads), "n": int(n),
        "labels": [str(label) for label in labels],
        "segments": [int(s) for s in np.asarray(segments).astype(int)],
        "special": [int(bool(s)) for s in np.asarray(special)],
        "is_pair": bool(is_pair), "scale": SCALE,
        "thumbs": model["thumbs"], "size": model["size"], "pool": model["pool"],
    }
    fixed = len(json.dumps(payload)) + 64 * n_layers + 200
    room = int(budget) - fixed
    dense = n_layers * _b64_len(n_heads * n * n)
    if dense <= room:
        payload.update(encoding="dense", top_k=None,
                       layers=[{"weights": _b64(q[l])} for l in range(n_layers)])
        return _with_digest(payload)
    nonzero = (q > 0).sum(-1)
    lo, hi = 0, int(nonzero.max())
    while lo < hi:  # the largest k whose sparse arrays fit the room
        mid = (lo + hi + 1) // 2
        if _sparse_bytes(nonzero, mid) <= room:
            lo = mid
        else:
            hi = mid - 1
    if lo < 1:
        raise ValueError(f"{n} tokens do not fit a {budget}-byte payload even with one key "
                         "per query.")
    k = lo
    layers = []
    for l in range(n_layers):  # a layer at a time: the masks stay one layer's size
        keep = top_k_mask(q[l], k)  # the k largest keys of each row, ties to the lower key
        keep &= q[l] > 0
        counts = keep.sum(-1).astype("<u2")  # [H, n]
        _, _, keys = np.nonzero(keep)
        layers.append({"counts": _b64(counts), "keys": _b64(keys.astype("<u2")),
                       "weights": _b64(q[l][keep]), "n_edges": int(keys.size)})
    payload.update(encoding="sparse", top_k=int(k), layers=layers)
    return _with_digest(payload)


def _with_digest(payload: dict) -> dict:
    """A short content hash: the component redraws from scratch only when it changes."""
    payload["digest"] = hashlib.sha1(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]
    return payload


def heatmap_payload(labels: list[str], matrix: np.ndarray, *, layer: int, head: int) -> dict:
    """One head's full ``[n, n]`` map for the component's canvas heatmap: 8 bits relative to
    the map's maximum (``q = round(w / max * 255)``, drawn as ``q * max / 255``, so within
    ``0.5 * max / 255`` of the map), the colour scale running from 0 to ``max``."""
    m = np.nan_to_num(np.asarray(matrix, dtype=np.float64), nan=0.0)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] != len(labels) or not len(labels):
        raise ValueError(f"matrix must be [n, n] with n = {len(labels)} labels, got {m.shape}.")
    top = float(m.max()) if m.size else 0.0
    q = quantise(m / top) if top > 0 else np.zeros(m.shape, dtype=np.uint8)
    return {"layer": int(layer), "head": int(head), "n": int(m.shape[0]),
            "max": top, "weights": _b64(q)}
