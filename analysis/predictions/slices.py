"""The slices a data set is cut into (docs/METHODS.md, "Predictions"): every gold label, every
aspect category asked about (ABSA), and the input's length in thirds; a slice is a boolean mask
over the rows, keyed ``kind:value`` (``all``, ``label:negative``, ``aspect:food``,
``length:short``), and named in words for the page."""

from __future__ import annotations

import numpy as np

ALL = "all"
LENGTHS = ("short", "medium", "long")


def length_bins(tokens) -> tuple[np.ndarray, list[str]]:
    """(bin index per row, the bins' names): the rows' token counts cut at their thirds (the
    33rd and 67th percentiles); fewer bins where the counts do not spread."""
    tokens = np.asarray(tokens, dtype=np.int64)
    if not len(tokens):
        return np.zeros(0, dtype=np.int64), []
    cuts = sorted({int(np.quantile(tokens, q, method="lower")) for q in (1 / 3, 2 / 3)})
    cuts = [c for c in cuts if c < tokens.max()]
    idx = np.searchsorted(np.asarray(cuts), tokens, side="left")
    edges = [int(tokens.min())] + [c + 1 for c in cuts]
    highs = cuts + [int(tokens.max())]
    names = [f"{lo}-{hi} tokens" if lo != hi else f"{lo} tokens" for lo, hi in zip(edges, highs)]
    return idx, names


def slices(gold, classes, tokens, categories=None) -> dict[str, tuple[str, np.ndarray]]:
    """key -> (name in words, mask [n]) of every slice with at least one row: the whole set,
    each gold label, each aspect category (ABSA), each length third."""
    gold = np.asarray(gold)
    out = {ALL: ("all examples", np.ones(len(gold), dtype=bool))}
    for c, name in enumerate(classes):
        mask = gold == c
        if mask.any():
            out[f"label:{name}"] = (f"gold label {name}", mask)
    if categories is not None:
        cats = np.asarray(categories, dtype=object)
        for cat in dict.fromkeys(categories):
            out[f"aspect:{cat}"] = (f"asked about {cat}", cats == cat)
    idx, names = length_bins(tokens)
    if len(names) > 1:
        keys = LENGTHS if len(names) == 3 else (LENGTHS[0], LENGTHS[2])
        for k, name in enumerate(names):
            out[f"length:{keys[k]}"] = (name, idx == k)
    return out
