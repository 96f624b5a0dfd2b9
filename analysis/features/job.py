"""A corpus's activations at chosen layers as a map/merge corpus job
(:mod:`analysis.core.execution.corpus`; docs/METHODS.md section 19, "Where it runs"): the
forward passes, the heavy part of training a dictionary, on one process or over shards on a
Ray cluster, with the same numbers.

The corpus travels as a Dataset of its readable inputs (``text``, ``text_pair``: those
:func:`analysis.features.activations.encode_corpus` kept, in order); a shard's partial is each
of its inputs' hidden states at the layers ([n_tokens, d] float32, real tokens only, [CLS] and
[SEP] included), encoded with the job's token cap exactly as the driver encodes them; the
merge puts the inputs back in corpus order. The token table, the labels and the held-out split
are then built on the driver from the same encodings (:func:`collect_on`), so the activations
are those of :func:`analysis.features.activations.collect` (to float rounding: a shard's
batches pad to other lengths).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from analysis.core.encoding import encode
from analysis.features.activations import (Activations, Progress, assemble, check_layers,
                                           encode_corpus, hidden_rows, token_cap)
from analysis.features.corpus import FeatureCorpus
from analysis.features.data import load_models

UNIT = "inputs"


@dataclass
class Partial:
    rows: list[int]
    per: dict[int, list[np.ndarray]]


@dataclass
class ActivationsJob:
    """The hidden states of ``spec`` (a classifier with its task head where it is one, as
    :func:`analysis.features.data.load_models` loads it) at ``layers``, each input cut to
    ``max_length`` tokens: plain parameters only, so it pickles to a Ray worker."""

    spec: str
    layers: tuple[int, ...]
    max_length: int
    batch_size: int = 32

    def load(self):
        return load_models(self.spec)[0]

    def map(self, loaded, shard, rows, progress: Progress | None = None) -> Partial:
        rows = list(rows)
        if not rows or shard is None or len(shard) == 0:
            return Partial(rows, {int(layer): [] for layer in self.layers})
        encs = [encode(loaded.tokenizer, t, p, max_length=self.max_length)
                for t, p in zip(shard["text"], shard["text_pair"])]
        return Partial(rows, hidden_rows(loaded, encs, self.layers, self.batch_size, progress))

    def merge(self, partials: Sequence[Partial]) -> dict[int, list[np.ndarray]]:
        parts = sorted((p for p in partials if p.rows), key=lambda p: p.rows[0])
        return {int(layer): [a for p in parts for a in p.per[int(layer)]]
                for layer in self.layers}


def inputs_dataset(corpus: FeatureCorpus, kept: Sequence[int]):
    """The kept inputs of ``corpus`` as a ``datasets.Dataset`` (``text``, ``text_pair``)."""
    # lazy: imported when used: datasets (heavy)
    import datasets

    return datasets.Dataset.from_dict({"text": [corpus.texts[i] for i in kept],
                                       "text_pair": [corpus.pairs[i] for i in kept]})


Run = Callable[..., dict]  # run(job, models, dataset, progress): the placement's runner


def collect_on(run: Run | None, loaded, corpus: FeatureCorpus, layers: Sequence[int],
               batch_size: int = 32, progress: Progress | None = None,
               encodings=None, max_length: int | None = None) -> Activations:
    """:func:`analysis.features.activations.collect` with the forward passes handed to
    ``run`` (the placement's runner of a corpus job: in this process,
    :func:`analysis.core.execution.corpus.run_local`, or over shards on a Ray cluster); None:
    in this process as :func:`~analysis.features.activations.collect` does it.
    ``max_length``: the token cap ``encodings`` were made with (default: the model's and the
    corpus's), which the job's workers encode with again."""
    check_layers(loaded, layers)
    cap = token_cap(loaded, corpus)
    encs, kept = encodings or encode_corpus(loaded.tokenizer, corpus, cap)
    if run is None:
        per = hidden_rows(loaded, encs, layers, batch_size, progress)
    else:
        job = ActivationsJob(loaded.spec, tuple(int(v) for v in layers),
                             int(max_length or cap), batch_size)
        per = run(job, loaded, inputs_dataset(corpus, kept), progress)
    return assemble(corpus, encs, kept, per, cap)
