"""A treebank, run: head accuracies alone (:func:`syntax_heads`: the map/merge job
:class:`analysis.syntax.job.HeadsJob` in the process, the whole treebank one shard), or head
accuracies and word vectors from ONE forward over it (:func:`syntax_pass`, docs/METHODS.md
section 10): the attention maps feed :class:`analysis.syntax.heads.HeadsAccumulator`, the
hidden states :class:`analysis.syntax.states.StatesCollector`, batch by batch. Above
:mod:`.heads` (what the maps give) and :mod:`.job` (map and merge)."""

from __future__ import annotations

import time
from typing import Callable

from analysis.core.execution.corpus import run_local
from analysis.syntax.heads import HeadsAccumulator, SyntaxResult, result_of
from analysis.syntax.job import HeadsJob
from analysis.syntax.passes import treebank_pass
from analysis.syntax.states import StatesCollector, WordStates
from analysis.syntax.words import encode_treebank


def syntax_pass(loaded, dataset, *, max_sentences: int | None = None, batch_size: int = 32,
                progress: Callable[[int, int], None] | None = None
                ) -> tuple[SyntaxResult, WordStates]:
    """(:func:`analysis.syntax.run.syntax_heads`'s result, :func:`analysis.syntax.states.
    extract_word_states`'s word vectors) of a treebank Dataset, from one batched pass."""
    t0 = time.perf_counter()
    encoded = encode_treebank(loaded, dataset, max_sentences)
    heads = HeadsAccumulator(encoded, loaded.n_layers, loaded.n_heads)
    states = StatesCollector(encoded)
    treebank_pass(loaded, encoded, [heads, states], attentions=True, hidden_states=True,
                  batch_size=batch_size, progress=progress)
    seconds = time.perf_counter() - t0
    return result_of(heads, loaded, seconds), states.states(seconds)


def syntax_heads(loaded, dataset, *, max_sentences: int | None = None, batch_size: int = 32,
                 progress: Callable[[int, int], None] | None = None,
                 encoded=None) -> SyntaxResult:
    """Accuracy of every head for every relation of a treebank Dataset (one batched pass;
    sentences longer than the model's maximum are skipped and counted)."""
    t0 = time.perf_counter()
    if encoded is None:  # the whole treebank as one shard of the map/merge job
        if dataset is not None and max_sentences is not None and max_sentences < len(dataset):
            dataset = dataset.select(range(int(max_sentences)))
        result = run_local(HeadsJob(loaded.spec, batch_size), loaded, dataset, progress)
        result.seconds = time.perf_counter() - t0
        return result
    acc = HeadsAccumulator(encoded, loaded.n_layers, loaded.n_heads)
    treebank_pass(loaded, encoded, [acc], attentions=True, hidden_states=False,
                  batch_size=batch_size, progress=progress)
    return result_of(acc, loaded, time.perf_counter() - t0)
