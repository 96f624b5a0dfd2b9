"""Anisotropy and self-similarity of every layer (Ethayarajh 2019; docs/METHODS.md section 13,
"Anisotropy and self-similarity").

- anisotropy: the mean cosine similarity of random pairs of word vectors from different
  sentences (the same pairs at every layer and for both models: a fixed seed);
- self-similarity: for every word form (lower-cased) seen in at least ``min_contexts``
  different sentences, the mean cosine similarity of its vectors over all pairs of its
  contexts (at most ``max_contexts`` of them, chosen with the seed), averaged over those words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

N_PAIRS = 2000
MIN_CONTEXTS = 5
MAX_CONTEXTS = 20


def _unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float64)
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


def random_pairs(groups: Sequence[int], n_pairs: int = N_PAIRS, seed: int = 0) -> np.ndarray:
    """[k, 2] indices of random word pairs from different sentences (``groups`` names each
    word's sentence); empty when every word is in one sentence."""
    groups = np.asarray(groups)
    n = len(groups)
    if n < 2 or len(np.unique(groups)) < 2:
        return np.zeros((0, 2), dtype=np.int64)
    rng = np.random.default_rng(seed)
    out = np.zeros((0, 2), dtype=np.int64)
    for _ in range(20):  # draw, keep the cross-sentence pairs, until there are enough
        draw = rng.integers(0, n, size=(2 * n_pairs, 2))
        draw = draw[groups[draw[:, 0]] != groups[draw[:, 1]]]
        out = np.vstack([out, draw])[:n_pairs]
        if len(out) >= n_pairs:
            break
    return out


def anisotropy(x: np.ndarray, pairs: np.ndarray) -> float | None:
    """Mean cosine similarity of the vector pairs ``pairs`` of ``x`` [N, D] (None without
    pairs)."""
    if len(pairs) == 0:
        return None
    u = _unit(x)
    return float(np.einsum("ij,ij->i", u[pairs[:, 0]], u[pairs[:, 1]]).mean())


@dataclass
class WordContexts:
    """The word forms seen in enough sentences and the rows of their chosen contexts."""

    forms: list[str]
    rows: list[np.ndarray]


def word_contexts(forms: Sequence[str], groups: Sequence[int], min_contexts: int = MIN_CONTEXTS,
                  max_contexts: int = MAX_CONTEXTS, seed: int = 0) -> WordContexts:
    """Rows of every lower-cased word form that occurs in at least ``min_contexts`` different
    sentences (one occurrence per sentence, the first; at most ``max_contexts`` sentences,
    sampled with the seed)."""
    rng = np.random.default_rng(seed)
    first: dict[str, dict] = {}
    for i, (f, g) in enumerate(zip(forms, groups)):
        first.setdefault(str(f).lower(), {}).setdefault(g, i)
    out = WordContexts([], [])
    for form in sorted(first):
        rows = np.array(sorted(first[form].values()), dtype=np.int64)
        if len(rows) < min_contexts:
            continue
        if len(rows) > max_contexts:
            rows = np.sort(rng.choice(rows, size=max_contexts, replace=False))
        out.forms.append(form)
        out.rows.append(rows)
    return out


def self_similarity(x: np.ndarray, contexts: WordContexts) -> float | None:
    """Mean over the words of ``contexts`` of the mean pairwise cosine similarity of their
    vectors in ``x`` [N, D] (None without such words)."""
    if not contexts.rows:
        return None
    u = _unit(x)
    sims = []
    for rows in contexts.rows:
        v = u[rows]
        g = v @ v.T
        m = len(rows)
        sims.append((g.sum() - np.trace(g)) / (m * (m - 1)))
    return float(np.mean(sims))


def layer_geometry(layers: Sequence[np.ndarray], forms: Sequence[str], groups: Sequence[int],
                   n_pairs: int = N_PAIRS, min_contexts: int = MIN_CONTEXTS,
                   max_contexts: int = MAX_CONTEXTS, seed: int = 0
                   ) -> tuple[list[float | None], list[float | None], int]:
    """(anisotropy per layer, self-similarity per layer, number of words behind the
    self-similarity)."""
    pairs = random_pairs(groups, n_pairs, seed)
    ctx = word_contexts(forms, groups, min_contexts, max_contexts, seed)
    return ([anisotropy(x, pairs) for x in layers],
            [self_similarity(x, ctx) for x in layers], len(ctx.forms))
