"""Kovaleva et al. (2019)'s five pattern types from three transparent features per map
(vertical, diagonal, block: :func:`analysis.drift.batched.batch_features`), with visible,
adjustable thresholds; shares, before -> after transitions and a gallery
(docs/METHODS.md section 9)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.core.errors import InputError

PATTERN_TYPES = ("vertical", "diagonal", "vertical+diagonal", "block", "heterogeneous")


@dataclass(frozen=True)
class PatternThresholds:
    """Rules, checked in this order (first match wins):

    1. vertical+diagonal: vertical >= ``mixed`` and diagonal >= ``mixed``
    2. vertical: vertical >= ``vertical``
    3. diagonal: diagonal >= ``diagonal``
    4. block: block >= ``block``
    5. heterogeneous: everything else
    """

    vertical: float = 0.5
    diagonal: float = 0.5
    mixed: float = 0.3
    block: float = 0.6

    def describe(self) -> list[str]:
        return [
            f"vertical+diagonal: mass on [CLS]/[SEP] >= {self.mixed:.2f} and on i-1, i, i+1 "
            f">= {self.mixed:.2f}",
            f"vertical: mass on [CLS]/[SEP] >= {self.vertical:.2f}",
            f"diagonal: mass on i-1, i, i+1 >= {self.diagonal:.2f}",
            f"block: closeness to uniform attention within the own segment >= {self.block:.2f}",
            "heterogeneous: none of the above",
        ]


def classify_patterns(features: np.ndarray,
                      thresholds: PatternThresholds | None = None) -> np.ndarray:
    """Type index into PATTERN_TYPES for features [..., 3] (see PatternThresholds)."""
    t = thresholds or PatternThresholds()
    f = np.asarray(features)
    v, d, b = f[..., 0], f[..., 1], f[..., 2]
    out = np.full(v.shape, PATTERN_TYPES.index("heterogeneous"), dtype=np.int8)
    rules = [  # reversed so that earlier rules overwrite later ones
        (b >= t.block, "block"),
        (d >= t.diagonal, "diagonal"),
        (v >= t.vertical, "vertical"),
        ((v >= t.mixed) & (d >= t.mixed), "vertical+diagonal"),
    ]
    for mask, name in rules:
        out[mask] = PATTERN_TYPES.index(name)
    return out


def pattern_shares(types: np.ndarray) -> dict[str, float]:
    """Share of each pattern type among all classified maps (sums to 1)."""
    types = np.asarray(types).ravel()
    total = max(len(types), 1)
    return {name: float((types == k).sum() / total) for k, name in enumerate(PATTERN_TYPES)}


def pattern_transitions(types_before: np.ndarray, types_after: np.ndarray) -> np.ndarray:
    """[5, 5] counts of maps of type i before and type j after (same example and head)."""
    k = len(PATTERN_TYPES)
    out = np.zeros((k, k), dtype=np.int64)
    np.add.at(out, (np.asarray(types_before).ravel(), np.asarray(types_after).ravel()), 1)
    return out


def gallery(result, which: str, pattern: str, thresholds: PatternThresholds | None = None,
            k: int = 6, seed: int = 0) -> list[tuple[int, int, int]]:
    """Up to k (example, layer, head) triples of a :class:`analysis.drift.DriftResult` whose
    map (``which`` = before/after) has ``pattern``; drawn at random (fixed seed) so the
    gallery is not just the first heads."""
    if pattern not in PATTERN_TYPES:
        raise InputError(f"Unknown pattern type {pattern!r}; "
                         f"use one of {', '.join(PATTERN_TYPES)}.")
    feats = result.features_before if which == "before" else result.features_after
    types = classify_patterns(feats, thresholds)
    hits = np.argwhere(types == PATTERN_TYPES.index(pattern))
    if not len(hits):
        return []
    rng = np.random.default_rng(seed)
    pick = rng.choice(len(hits), size=min(k, len(hits)), replace=False)
    return [tuple(int(x) for x in hits[i]) for i in sorted(pick)]
