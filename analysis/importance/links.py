"""The other studies' heads to mark on the importance map (docs/METHODS.md section 12): the
Aspect heads page's top heads (:func:`analysis.aspects.heads.discover` on the same held-out
sentences, kind ``aspect``) and the No-op statistics' [SEP] heads
(:func:`analysis.noop.corpus_stats` on the same inputs: heads that put more than half of
their attention on [SEP])."""

from __future__ import annotations

import numpy as np
from analysis.aspects.heads import discover
from analysis.core.corpus import make_dataset
from analysis.noop import corpus_stats

ASPECT_TOP = 3
SEP_SHARE = 0.5


def aspect_heads(loaded, ev, top: int = ASPECT_TOP) -> list[tuple[int, int]]:
    """The ``top`` ranked aspect heads (0-indexed layer, head) on the ABSA sentences of ``ev``
    (none for other data or when no pair has an aspect term)."""
    if ev.sentences is None or ev.task is None:
        return []
    disc = discover(loaded, ev.sentences, ev.task, ev.pair_order)
    return [(int(r["layer"]), int(r["head"])) for r in disc.ranked["aspect"][:top]]


def sep_heads(loaded, ev, share: float = SEP_SHARE) -> list[tuple[int, int]]:
    """Heads whose mean attention to [SEP] over the inputs of ``ev`` is above ``share``
    (0-indexed layer, head), the highest first."""
    ds = make_dataset([a for a, _ in ev.texts], [b for _, b in ev.texts])
    sep = corpus_stats(loaded, ds, norms=False).metrics["sep"]
    flat = [int(i) for i in np.argsort(-sep, axis=None) if sep.flat[i] > share]
    return [(i // sep.shape[1], i % sep.shape[1]) for i in flat]
