"""The feature browser's numbers (docs/METHODS.md section 19, "Feature browser"): for every
feature its frequency and activations, its top tokens, its top contexts, its activation
histogram, the annotations it aligns with and a label built from them; and the features firing
on each token of one text.

Alignment: over the tokens that carry a label name (UPOS, dependency relation, aspect role,
the input's label, the category asked; '_' tokens left out), for each value ``v``:
precision = P(label = v | the feature fires), recall = P(the feature fires | label = v), and
their harmonic mean F1; a value needs ``MIN_SUPPORT`` tokens. The label of a feature is its
best-aligned value (F1 >= ``LABEL_F1``) and its top tokens.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from analysis.features.activations import Tokens
from analysis.features.sae import SAE

MIN_SUPPORT = 5
LABEL_F1 = 0.3
CONTEXTS = 6
WINDOW = 10  # tokens either side of a context's peak
BINS = 12
NONE = "_"


@dataclass
class Codes:
    """The sparse codes of a token table: ``z`` [N, m] float32 (zeros where a feature is off)."""

    z: np.ndarray
    tokens: Tokens

    @property
    def fires(self) -> np.ndarray:
        return self.z > 0


def codes(sae: SAE, x: np.ndarray, tokens: Tokens, chunk: int = 4096) -> Codes:
    z = np.concatenate([sae.encode(x[s:s + chunk]) for s in range(0, len(x), chunk)]) \
        if len(x) else np.zeros((0, sae.m), np.float32)
    return Codes(z, tokens)


def summary(c: Codes) -> dict:
    """Per feature: ``freq`` (share of tokens it fires on), ``mean`` (its mean activation where
    it fires), ``max``, ``top_tokens`` (its most frequent firing tokens, up to 3)."""
    fires = c.fires
    count = fires.sum(0)
    total = c.z.sum(0)
    n = max(1, len(c.z))
    out = {"freq": (count / n).tolist(),
           "mean": np.where(count > 0, total / np.maximum(count, 1), 0.0).tolist(),
           "max": c.z.max(0).tolist() if len(c.z) else [0.0] * c.z.shape[1],
           "top_tokens": []}
    toks = np.asarray(c.tokens.token, dtype=object)
    for f in range(c.z.shape[1]):
        rows = np.flatnonzero(fires[:, f])
        out["top_tokens"].append([t for t, _ in Counter(toks[rows]).most_common(3)])
    return out


def alignment(fires: np.ndarray, labels: dict[str, Sequence[str]],
              min_support: int = MIN_SUPPORT) -> list[dict]:
    """Every (label name, value) with its precision, recall and F1 for one feature's firing
    marks ``fires`` [N] over tokens whose ``labels[name]`` [N] are known, best F1 first."""
    return alignment_all(np.asarray(fires, bool)[:, None], labels, min_support)[0]


def alignment_all(fires: np.ndarray, labels: dict[str, Sequence[str]],
                  min_support: int = MIN_SUPPORT, top: int | None = None) -> list[list[dict]]:
    """:func:`alignment` of every feature at once (``fires`` [N, m]): one matrix product per
    label name counts each feature's firing tokens per value."""
    fires = np.asarray(fires, bool)
    per: list[list[dict]] = [[] for _ in range(fires.shape[1])]
    for name, values in labels.items():
        values = np.asarray(values, dtype=object)
        known = values != NONE
        if not known.any():
            continue
        names, codes_ = np.unique(values[known].astype(str), return_inverse=True)
        support = np.bincount(codes_, minlength=len(names))
        keep = np.flatnonzero(support >= min_support)
        if not len(keep):
            continue
        onehot = np.zeros((len(codes_), len(names)), np.float32)
        onehot[np.arange(len(codes_)), codes_] = 1.0
        fk = fires[known].astype(np.float32)  # [n_known, m]
        hits = fk.T @ onehot  # [m, V]
        n_fire = fk.sum(0)  # [m]
        for f in range(fires.shape[1]):
            for v in keep:
                hit = float(hits[f, v])
                p = hit / n_fire[f] if n_fire[f] else 0.0
                r = hit / support[v]
                f1 = 2 * p * r / (p + r) if p + r > 0 else 0.0
                per[f].append({"name": name, "label": str(names[v]), "precision": p,
                               "recall": r, "f1": f1, "support": int(support[v]),
                               "fires": int(n_fire[f])})
    for rows in per:
        rows.sort(key=lambda r: (-r["f1"], r["name"], r["label"]))
        if top is not None:
            del rows[top:]
    return per


def label(top_tokens: Sequence[str], aligned: Sequence[dict]) -> str:
    """A short label: the best-aligned annotation (when its F1 reaches ``LABEL_F1``) and the
    top tokens."""
    words = ", ".join(f"'{t}'" for t in top_tokens[:3]) or "no token"
    if aligned and aligned[0]["f1"] >= LABEL_F1:
        a = aligned[0]
        return f"{a['name']} = {a['label']} ({words})"
    return words


def contexts(c: Codes, feature: int, n: int = CONTEXTS, window: int = WINDOW) -> list[dict]:
    """The ``n`` inputs where ``feature`` peaks highest (one context per input): the tokens
    around the peak and the feature's activation on each."""
    z = c.z[:, feature]
    order = np.argsort(-z, kind="stable")
    seen, out = set(), []
    ex = c.tokens.example
    for row in order:
        if z[row] <= 0 or len(out) >= n:
            break
        e = int(ex[row])
        if e in seen:
            continue
        seen.add(e)
        rows = np.flatnonzero(ex == e)
        peak = int(np.flatnonzero(rows == row)[0])
        lo, hi = max(0, peak - window), min(len(rows), peak + window + 1)
        span = rows[lo:hi]
        out.append({"example": e, "position": int(c.tokens.position[row]),
                    "activation": float(z[row]),
                    "tokens": [c.tokens.token[r] for r in span],
                    "special": [bool(c.tokens.special[r]) for r in span],
                    "acts": [round(float(z[r]), 4) for r in span],
                    "peak": peak - lo, "cut_left": lo > 0, "cut_right": hi < len(rows)})
    return out


def histogram(values: np.ndarray, bins: int = BINS) -> dict:
    """Counts of a feature's nonzero activations in ``bins`` equal bins from 0 to its max."""
    v = np.asarray(values, np.float64)
    v = v[v > 0]
    if not len(v):
        return {"edges": [], "counts": []}
    counts, edges = np.histogram(v, bins=bins, range=(0.0, float(v.max())))
    return {"edges": [float(e) for e in edges], "counts": [int(k) for k in counts]}


def dashboard(c: Codes, feature: int, labels: dict[str, Sequence[str]],
              fires_labelled: np.ndarray | None = None) -> dict:
    """One feature's dashboard: contexts, histogram, alignment (over ``labels``, whose tokens
    fire as ``fires_labelled`` [N'] when they are not ``c``'s own tokens)."""
    fires = c.fires[:, feature] if fires_labelled is None else fires_labelled
    return {"feature": int(feature), "contexts": contexts(c, feature),
            "histogram": histogram(c.z[:, feature]),
            "alignment": alignment(fires, labels)[:12]}


def per_token(sae: SAE, x: np.ndarray, tokens: Sequence[str], top: int | None = None) -> dict:
    """``{"tokens", "features"}``: per token the features firing on it, strongest first, as
    ``{"feature": i, "activation": a}`` (``top`` of them, or all)."""
    z = sae.encode(x)
    feats = []
    for row in z:
        idx = np.flatnonzero(row > 0)
        idx = idx[np.argsort(-row[idx], kind="stable")]
        if top is not None:
            idx = idx[:top]
        feats.append([{"feature": int(i), "activation": float(row[i])} for i in idx])
    return {"tokens": list(tokens), "features": feats}
