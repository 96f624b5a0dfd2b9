"""The corpus part as map/merge (:mod:`analysis.core.execution.corpus`; docs/METHODS.md section 13,
"Shards").

``map`` runs one shard of the corpus through each model (the one batched forward path) and
returns its rows: every word's vector at every layer with its form, sentence and labels (the
probes' features are per-word rows, and anisotropy pairs and self-similarity contexts are drawn
over the whole corpus, so the rows themselves are the sufficient statistics). ``merge`` puts
the shards' rows back in corpus order (empty shards add nothing) and computes the probes,
anisotropy, self-similarity and the scatter once, so a sharded run gives the whole-corpus
numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from analysis.core.errors import DataError
from analysis.representations.states import WordCorpus, absa_words, concat_words, treebank_words
from analysis.core.models import load_model
from analysis.representations.corpus import result_of
from analysis.representations.labelled import labelled_words

Progress = Callable[[int, int], None]


@dataclass
class RepresentationsPartial:
    """One shard's word rows for each model (None where the shard gave no word: empty, or
    nothing the study reads; ``error`` then says why, for a corpus where no shard gives any)."""

    first_row: int
    words: list[WordCorpus | None]
    error: str | None = None
    names: list[str] = field(default_factory=list)


def read_words(loaded, dataset, kind: str, max_sentences: int | None = None,
               batch_size: int = 32, progress: Progress | None = None) -> WordCorpus:
    """One model's word rows of a treebank, ABSA data or a labelled corpus."""
    read = {"treebank": treebank_words, "absa": absa_words, "labelled": labelled_words}[kind]
    return read(loaded, dataset, max_sentences=max_sentences, batch_size=batch_size,
                progress=progress)


@dataclass
class RepresentationsJob:
    """:func:`analysis.representations.run.corpus_representations` as a corpus job: plain
    parameters only (model specs), so it pickles to a Ray worker."""

    spec: str
    compare_spec: str | None = None
    kind: str = "treebank"
    probes: Sequence[str] = ()
    batch_size: int = 32
    method: str = "pca"
    max_points: int = 1500
    folds: int = 5
    seed: int = 0
    scatter: bool = True

    def load(self):
        return (load_model(self.spec),
                load_model(self.compare_spec) if self.compare_spec else None)

    def map(self, models, shard, rows, progress: Progress | None = None
            ) -> RepresentationsPartial:
        rows = list(rows)
        loaded = [m for m in models if m is not None]
        part = RepresentationsPartial(rows[0] if rows else 0, [None] * len(loaded),
                                      names=[m.name for m in loaded])
        if not rows or shard is None or len(shard) == 0:
            return part
        for k, m in enumerate(loaded):
            step = None if progress is None else (
                lambda d, t, k=k: progress(k * t + d, len(loaded) * t))
            try:
                part.words[k] = read_words(m, shard, self.kind, batch_size=self.batch_size,
                                           progress=step)
            except DataError as exc:  # nothing in this shard; the whole corpus may have some
                part.words = [None] * len(loaded)
                part.error = str(exc)
                return part
        return part

    def merge(self, partials: Sequence[RepresentationsPartial],
              progress: Progress | None = None):
        parts = sorted(partials, key=lambda p: p.first_row)
        full = [p for p in parts if p.words and p.words[0] is not None]
        if not full:
            errors = [p.error for p in parts if p.error]
            raise DataError(errors[0] if errors else "The corpus is empty.")
        sides = [concat_words([p.words[k] for p in full], [p.first_row for p in full])
                 for k in range(len(full[0].words))]
        return result_of(sides, self.probes, method=self.method, max_points=self.max_points,
                         folds=self.folds, seed=self.seed, scatter=self.scatter,
                         progress=progress, names=full[0].names)
