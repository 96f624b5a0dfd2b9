"""The other studies' heads marked on the map (analysis.importance.links): the Aspect heads
page's ranking on its default data and the No-op statistics' [SEP] share on its default corpus,
whatever data the classifier is evaluated on (one source of truth with the Head atlas)."""

from __future__ import annotations

import numpy as np

from analysis.absa.readers import load_sample
from analysis.atlas.facts import DEFAULT, TOP_RANKED
from analysis.aspects.heads import PAGE_SENTENCES, discover
from analysis.core.corpus import sample_corpus
from analysis.importance.links import (ASPECT_TOP, NOOP_EXAMPLES, SEP_SHARE, aspect_heads,
                                       sep_heads)
from analysis.noop import corpus_stats
from importance_util import tiny_absa


def test_marked_heads_are_the_other_pages_heads():
    loaded, card, ev = tiny_absa(sentences=6)
    ranked = discover(loaded, load_sample(), "qa_m", card["pair_order"],
                      max_sentences=PAGE_SENTENCES).ranked["aspect"]
    got = aspect_heads(loaded, ev, top=2)
    assert got == [(r["layer"], r["head"]) for r in ranked[:2]] and len(got) == 2
    sep = corpus_stats(loaded, sample_corpus(NOOP_EXAMPLES), norms=False).metrics["sep"]
    cut = float(np.median(sep))
    heads = sep_heads(loaded, ev, share=cut)
    assert heads and all(sep[l, h] > cut for l, h in heads)
    assert len(heads) == int(np.sum(sep > cut))
    assert [sep[l, h] for l, h in heads] == sorted((sep[l, h] for l, h in heads), reverse=True)
    ev.sentences = None  # not ABSA data: no aspect heads
    assert aspect_heads(loaded, ev) == []


def test_the_marks_follow_the_atlas_rules():
    """The marks are the heads the Head atlas names: its top-ranked aspect heads and its [SEP]
    no-op rule at its default threshold, on the same default data."""
    assert ASPECT_TOP == TOP_RANKED and SEP_SHARE == DEFAULT.noop
