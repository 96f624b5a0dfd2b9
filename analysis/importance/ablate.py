"""Ablations run in batches (docs/METHODS.md section 12): the examples are encoded and padded
once; each padded batch goes through the model under many ablations per forward
(:func:`analysis.core.forward.forward_ablations`: the batch replicated from the first ablated layer
on, a different set of heads disabled per copy), as many copies as ``max_tokens`` allows.
Ablations are grouped by the first layer they touch, so a group shares the layers below it.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from analysis.core.batching import batches, pad_features
from analysis.core.forward import forward_ablations

MAX_TOKENS = 16384  # rows x padded length of one forward (the replicated batch)
BATCH_SIZE = 64


def single_ablations(n_layers: int, n_heads: int) -> np.ndarray:
    """[1 + L*H + L, L, H] disabled heads: the intact model, every single head (index
    ``1 + l * H + h``), then every whole layer (index ``1 + L*H + l``)."""
    out = np.zeros((1 + n_layers * n_heads + n_layers, n_layers, n_heads), dtype=bool)
    for layer in range(n_layers):
        for head in range(n_heads):
            out[1 + layer * n_heads + head, layer, head] = True
        out[1 + n_layers * n_heads + layer, layer] = True
    return out


def first_layers(disabled: np.ndarray) -> np.ndarray:
    """The first layer each ablation touches (L for the intact model)."""
    n_layers = disabled.shape[1]
    touched = disabled.any(axis=2)
    return np.where(touched.any(1), touched.argmax(1), n_layers)


def padded_batches(tokenizer, ev, batch_size: int = BATCH_SIZE) -> list[tuple[list, dict]]:
    """(example indices, padded inputs) of every batch, shortest first, made once."""
    return [(idx, pad_features(tokenizer, ev.features, idx))
            for idx in batches(ev.lengths, batch_size, ascending=True)]


def run_ablations(loaded, ev, disabled: np.ndarray, method: str = "uniform", *,
                  max_tokens: int = MAX_TOKENS, batch_size: int = BATCH_SIZE, prepared=None,
                  progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """Logits [A, n, C] (float32) of the classifier on every example of ``ev`` under each of
    the A ablations ``disabled`` [A, L, H] (bool; ``method`` "uniform" or "mask").
    ``prepared``: the :func:`padded_batches` to reuse."""
    disabled = np.asarray(disabled, dtype=bool)
    model = loaded.model
    prepared = prepared if prepared is not None else padded_batches(loaded.tokenizer, ev,
                                                                    batch_size)
    first = first_layers(disabled)
    groups = [np.flatnonzero(first == k) for k in np.unique(first)]
    out = None
    plan = []
    for idx, inputs in prepared:
        rows, width = inputs["input_ids"].shape
        per = max(1, max_tokens // (rows * width))
        plan += [(idx, inputs, g[k:k + per]) for g in groups for k in range(0, len(g), per)]
    for done, (idx, inputs, which) in enumerate(plan, 1):
        logits = forward_ablations(model, inputs, disabled[which], method)
        if out is None:
            out = np.zeros((len(disabled), ev.n_examples, logits.shape[-1]), dtype=np.float32)
        out[np.ix_(which, idx)] = logits
        if progress:
            progress(done, len(plan))
    return out
