"""Syntactic heads as map/merge (:mod:`analysis.core.execution.corpus`): each shard of a treebank is
encoded and run through the model once (:func:`analysis.syntax.passes.treebank_pass`) into hit
counts per relation, direction and head and offset counts
(:class:`analysis.syntax.heads.HeadsAccumulator`); counts add, so the merged accuracies are
exactly the whole treebank's."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from analysis.core.errors import DataError
from analysis.syntax.heads import DIRECTIONS, HeadsAccumulator, SyntaxResult
from analysis.syntax.passes import treebank_pass
from analysis.syntax.words import encode_treebank, none_fits, skipped_notes
from analysis.core.models import load_model


@dataclass
class HeadsPartial:
    """The counts of one shard and its sentences' gold columns (no encoding, no map)."""

    first_row: int
    model: str
    n_layers: int
    n_heads: int
    max_length: int
    hits: dict = field(default_factory=lambda: {d: {} for d in DIRECTIONS})
    n: Counter = field(default_factory=Counter)
    offsets: dict = field(default_factory=dict)
    rows: list = field(default_factory=list)
    ids: list = field(default_factory=list)
    words: list = field(default_factory=list)
    heads: list = field(default_factory=list)
    deprels: list = field(default_factory=list)
    sentences: list = field(default_factory=list)  # HeadsAccumulator.sentences
    skipped: int = 0


@dataclass
class HeadsJob:
    """:func:`analysis.syntax.run.syntax_heads` over a treebank Dataset (CoNLL-U columns)."""

    spec: str
    batch_size: int = 32
    max_batch_mb: float = 256.0

    def load(self):
        return load_model(self.spec)

    def map(self, loaded, shard, rows, progress=None) -> HeadsPartial:
        rows = list(rows)
        part = HeadsPartial(rows[0] if rows else 0, loaded.spec, loaded.n_layers,
                            loaded.n_heads, loaded.max_length)
        try:
            encoded = encode_treebank(loaded, shard)
        except DataError:  # an empty shard, or no sentence of it fits the model
            part.skipped = len(rows)
            return part
        acc = HeadsAccumulator(encoded, loaded.n_layers, loaded.n_heads)
        treebank_pass(loaded, encoded, [acc], attentions=True, hidden_states=False,
                      batch_size=self.batch_size, max_batch_mb=self.max_batch_mb,
                      progress=progress)
        part.hits, part.n, part.offsets = acc.hits, acc.n, acc.offsets
        part.sentences = acc.sentences
        part.rows = [rows[r] for r in encoded.rows]
        part.ids, part.words = list(encoded.ids), list(encoded.words)
        part.heads, part.deprels = list(encoded.heads), list(encoded.deprels)
        part.skipped = encoded.skipped
        return part

    def merge(self, partials) -> SyntaxResult:
        parts = sorted(partials, key=lambda p: p.first_row)
        first = parts[0]
        skipped = sum(p.skipped for p in parts)
        n_sentences = sum(len(p.rows) for p in parts)
        if not n_sentences:
            raise DataError(none_fits(first.max_length) if skipped else "The treebank is empty.")
        acc = HeadsAccumulator(None, first.n_layers, first.n_heads)
        for p in parts:
            for d in DIRECTIONS:
                for rel, hits in p.hits[d].items():
                    store = acc.hits[d]
                    store[rel] = store[rel] + hits if rel in store else hits
            acc.n.update(p.n)
            for rec in p.sentences:  # shards in row order, each in its own order
                acc.sentence_at[len(acc.sentence_at)] = rec
            for rel, c in p.offsets.items():
                acc.offsets.setdefault(rel, Counter()).update(c)

        def cat(name):
            return [x for p in parts for x in getattr(p, name)]

        return SyntaxResult(
            n_sentences=n_sentences, skipped=skipped, relations=acc.relations(),
            model=first.model, n_layers=first.n_layers, n_heads=first.n_heads,
            rows=cat("rows"), ids=cat("ids"), words=cat("words"), heads=cat("heads"),
            deprels=cat("deprels"), notes=skipped_notes(skipped, first.max_length))
