"""The drift study as map/merge (:mod:`analysis.core.execution.corpus`): each shard of the corpus is
encoded with the before-model's tokenizer and run through both models (:func:`analysis.drift.run.
map_corpus`); :func:`analysis.drift.run.merge_partials` puts the per-example measures back in
row order and adds the sums (no-op statistics, CKA's cross-products)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from analysis.drift.run import DriftPartial, DriftResult, map_corpus, merge_partials, model_meta
from analysis.core.encoding import Corpus, encode_dataset
from analysis.core.errors import DataError
from analysis.drift.pair import load_pair


@dataclass
class DriftJob:
    """Both checkpoints over a corpus Dataset (``text``, optional ``text_pair`` and
    ``label``). ``has_labels``: whether the whole corpus has usable gold labels (a shard whose
    labels are all blank keeps them then)."""

    before: str
    after: str
    batch_size: int = 32
    has_labels: bool = False
    max_batch_mb: float = 256.0  # the No-op study's budget (analysis.noop.corpus.NoopJob)

    def load(self):
        return models_of(*load_pair(self.before, self.after))

    def map(self, models, shard, rows, progress=None) -> DriftPartial:
        before, after, meta = models
        rows = list(rows)
        try:
            corpus = encode_dataset(before.tokenizer, shard, max_length=before.max_length)
        except DataError:  # an empty shard, or no readable example in it
            return map_corpus(before, after, Corpus([], [], skipped=len(rows)),
                              self.batch_size, meta=meta, rows=[])
        if self.has_labels and corpus.labels is None:
            col = shard["label"]
            corpus.labels = [col[r] for r in corpus.rows]
        return map_corpus(before, after, corpus, self.batch_size, progress, meta,
                          rows=[rows[r] for r in corpus.rows], max_batch_mb=self.max_batch_mb)

    def merge(self, partials) -> DriftResult:
        return merge_partials(partials)

    def capped(self, models, max_length: int):
        """The token cap on the before-model (whose tokenizer encodes the corpus), the meta
        made again from the capped pair (:func:`analysis.core.execution.work.capped`)."""
        before, after, _ = models
        return models_of(replace(before, max_length=max_length), after)


def models_of(before, after) -> tuple:
    """The job's models: both checkpoints and what the merge needs to know of them."""
    return before, after, model_meta(before, after)


def has_labels(dataset) -> bool:
    """Whether the corpus has gold labels that count (not all blank), as
    :func:`analysis.core.encoding.encode_dataset` decides for the whole corpus."""
    if dataset is None or "label" not in dataset.column_names:
        return False
    return not all(x is None or str(x).strip() == "" for x in dataset["label"])
