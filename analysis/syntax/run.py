"""Head accuracies and word vectors of one treebank from ONE forward over it
(docs/METHODS.md section 10): the attention maps feed
:class:`analysis.syntax.heads.HeadsAccumulator`, the hidden states
:class:`analysis.syntax.states.StatesCollector`, batch by batch."""

from __future__ import annotations

import time
from typing import Callable

from analysis.syntax.heads import HeadsAccumulator, SyntaxResult, result_of
from analysis.syntax.passes import treebank_pass
from analysis.syntax.states import StatesCollector, WordStates
from analysis.syntax.words import encode_treebank


def syntax_pass(loaded, dataset, *, max_sentences: int | None = None, batch_size: int = 32,
                progress: Callable[[int, int], None] | None = None
                ) -> tuple[SyntaxResult, WordStates]:
    """(:func:`analysis.syntax.heads.syntax_heads`'s result, :func:`analysis.syntax.states.
    extract_word_states`'s word vectors) of a treebank Dataset, from one batched pass."""
    t0 = time.perf_counter()
    encoded = encode_treebank(loaded, dataset, max_sentences)
    heads = HeadsAccumulator(encoded, loaded.n_layers, loaded.n_heads)
    states = StatesCollector(encoded)
    treebank_pass(loaded, encoded, [heads, states], attentions=True, hidden_states=True,
                  batch_size=batch_size, progress=progress)
    seconds = time.perf_counter() - t0
    return result_of(heads, loaded, seconds), states.states(seconds)
