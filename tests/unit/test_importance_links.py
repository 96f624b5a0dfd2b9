"""The other studies' heads marked on the map (analysis.importance.links): the Aspect heads
ranking and the No-op statistics' [SEP] share on the same inputs."""

from __future__ import annotations

import numpy as np

from analysis.aspects.heads import discover
from analysis.core.corpus import make_dataset
from analysis.importance.links import aspect_heads, sep_heads
from analysis.noop import corpus_stats
from importance_util import tiny_absa


def test_marked_heads_are_the_other_pages_heads():
    loaded, card, ev = tiny_absa(sentences=6)
    ranked = discover(loaded, ev.sentences, "qa_m", card["pair_order"]).ranked["aspect"]
    got = aspect_heads(loaded, ev, top=2)
    assert got == [(r["layer"], r["head"]) for r in ranked[:2]] and len(got) == 2
    sep = corpus_stats(loaded, make_dataset([a for a, _ in ev.texts],
                                            [b for _, b in ev.texts]), norms=False).metrics["sep"]
    cut = float(np.median(sep))
    heads = sep_heads(loaded, ev, share=cut)
    assert heads and all(sep[l, h] > cut for l, h in heads)
    assert len(heads) == int(np.sum(sep > cut))
    assert [sep[l, h] for l, h in heads] == sorted((sep[l, h] for l, h in heads), reverse=True)
    ev.sentences = None  # not ABSA data: no aspect heads
    assert aspect_heads(loaded, ev) == []
