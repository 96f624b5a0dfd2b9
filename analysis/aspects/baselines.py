"""What a head must beat to count as an aspect head: baselines over the same pairs
(docs/METHODS.md section 8).

Per kind: a random head (the mean over all heads), the best fixed position (an offset from the
start of the candidate words, or from their end when negative), the most frequent review word,
and uniform attention over the candidates (``|gold & candidates| / |candidates|``).
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

import numpy as np

from analysis.aspects.gold import KINDS, PairGold, candidates_for


def _share(hits) -> dict:
    """A hit share as both score and accuracy (a guess puts all its mass on one word)."""
    value = float(np.mean(hits))
    return {"score": value, "accuracy": value}


def best_position(pairs: Sequence[PairGold], kind: str, max_offset: int = 10) -> dict:
    """The offset in 0..max_offset-1, then -1..-max_offset, whose candidate word is gold in
    the most pairs (the first such offset on ties)."""
    best = None
    for off in list(range(max_offset)) + list(range(-1, -max_offset - 1, -1)):
        hits = []
        for p in pairs:
            cand = candidates_for(p, kind)
            ok = -len(cand) <= off < len(cand)
            hits.append(float(ok and cand[off] in p.sets[kind]))
        acc = float(np.mean(hits))
        if best is None or acc > best["accuracy"]:
            best = {"offset": off, "score": acc, "accuracy": acc}
    return best


def baselines(pairs: Sequence[PairGold], scores: dict | None = None, hits: dict | None = None,
              max_offset: int = 10) -> dict:
    """Per kind: ``n_pairs``, ``random_head`` (when the heads' ``scores`` and ``hits``
    [n_pairs, L, H] per kind are given), ``positional``, ``frequent_word``, ``uniform``."""
    freq = Counter(w.lower() for p in pairs for w in (p.words[j] for j in p.review))
    out = {}
    for kind in KINDS:
        sel = [p for p in pairs if kind in p.sets]
        res: dict = {"n_pairs": len(sel)}
        if not sel:
            out[kind] = res
            continue
        if scores is not None and len(scores[kind]):
            res["random_head"] = {"score": float(scores[kind].mean()),
                                  "accuracy": float(hits[kind].mean())}
        res["positional"] = best_position(sel, kind, max_offset)
        fw = []
        for p in sel:
            cand = candidates_for(p, kind)
            top = max(cand, key=lambda j: (freq.get(p.words[j].lower(), 0), -j))
            fw.append(float(top in p.sets[kind]))
        res["frequent_word"] = _share(fw)
        uni = [len(set(p.sets[kind]) & set(candidates_for(p, kind))) / len(candidates_for(p, kind))
               for p in sel]
        res["uniform"] = _share(uni)
        out[kind] = res
    return out
