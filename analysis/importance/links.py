"""The other studies' heads to mark on the importance map and on the patching corpus view
(docs/METHODS.md sections 12 and 18): the heads the other pages and the Head atlas name, from
the same calls on the same data, so that every page marks the same heads (issue 45; issue 49
item 6: this page once ranked aspect heads on its held-out sentences while the Aspect heads
page ranked them on its own data, and the two named different heads without saying so).

- the Aspect heads page's top heads: :func:`analysis.aspects.heads.discover` on that page's
  default data (:data:`ASPECT_DATA`), with the checkpoint's task and pair order, kind
  ``aspect``;
- the No-op statistics' [SEP] heads: :func:`analysis.noop.corpus_stats` on that page's default
  corpus (:data:`SEP_DATA`): heads that put more than half of their attention on [SEP] (the
  Head atlas's "[SEP] no-op" rule at its default threshold)."""

from __future__ import annotations

import numpy as np
from analysis.absa.readers import load_sample
from analysis.aspects.heads import PAGE_SENTENCES, discover
from analysis.core.corpus import sample_corpus
from analysis.noop import corpus_stats

ASPECT_TOP = 3  # = analysis.atlas.facts.TOP_RANKED
SEP_SHARE = 0.5  # = analysis.atlas.facts.DEFAULT.noop
NOOP_EXAMPLES = 200  # the No-op statistics page's default corpus cap
ASPECT_DATA = (f"ranked on the first {PAGE_SENTENCES} sentences of the bundled ABSA sample, "
               "the Aspect heads page's default")
SEP_DATA = (f"over half their attention on [SEP] across the first {NOOP_EXAMPLES} examples "
            "of the bundled sample corpus, No-op statistics' default")


def aspect_heads(loaded, ev, top: int = ASPECT_TOP) -> list[tuple[int, int]]:
    """The ``top`` ranked aspect heads (0-indexed layer, head) on :data:`ASPECT_DATA`, with
    the task and pair order of ``ev`` (none for data that is not ABSA, or when no pair has an
    aspect term)."""
    if ev.sentences is None or ev.task is None:
        return []
    disc = discover(loaded, load_sample(), ev.task, ev.pair_order,
                    max_sentences=PAGE_SENTENCES)
    return [(int(r["layer"]), int(r["head"])) for r in disc.ranked["aspect"][:top]]


def sep_heads(loaded, ev=None, share: float = SEP_SHARE) -> list[tuple[int, int]]:
    """Heads whose mean attention to [SEP] over :data:`SEP_DATA` is above ``share``
    (0-indexed layer, head), the highest first (``ev``: unused, the same for any data)."""
    sep = corpus_stats(loaded, sample_corpus(NOOP_EXAMPLES), norms=False).metrics["sep"]
    flat = [int(i) for i in np.argsort(-sep, axis=None) if sep.flat[i] > share]
    return [(i // sep.shape[1], i % sep.shape[1]) for i in flat]
