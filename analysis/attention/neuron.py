"""Neuron view: query and key vectors of one head, captured with forward hooks on the real model.

For a layer, head and query token ``i`` it returns q_i, every k_j, their elementwise product,
the scaled dot products q_i.k_j / sqrt(d) and their softmax. The softmax is checked against
the attention the model itself returned, so the view never shows numbers the model did not use.

Hooks go on the query and key projections, found by name (``query``/``key`` in BERT, RoBERTa,
ELECTRA, ALBERT...; ``q_lin``/``k_lin`` in DistilBERT). ALBERT shares one layer module across
all layers, so outputs are recorded in call order: the l-th call is layer l
(:func:`analysis.hooks.capture`). Formulas: docs/METHODS.md section 2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.encoding import Encoding
from analysis.errors import InputError
from analysis.forward import CaptureUnavailable, forward


class NeuronViewUnavailable(Exception):
    """The architecture's attention is not a plain scaled dot product we can reproduce."""


@dataclass
class NeuronView:
    tokens: list[str]
    layer: int
    head: int
    query_index: int
    query: np.ndarray  # [d]
    keys: np.ndarray  # [n, d]
    products: np.ndarray  # [n, d] elementwise q * k_j
    scores: np.ndarray  # [n] q.k_j / sqrt(d)
    softmax: np.ndarray  # [n]
    returned: np.ndarray  # [n] attention the model returned for this row
    max_abs_diff: float


def capture_qk(model, tokenizer, encoding: Encoding):
    """Forward once with the query and key projections captured; returns (queries [L][n, D],
    keys [L][n, D], attentions [L, H, n, n])."""
    try:
        fw = forward(model, tokenizer, [encoding], capture=("query", "key"))
    except CaptureUnavailable as exc:
        raise NeuronViewUnavailable(str(exc)) from None
    q = [t[0].float().cpu().numpy() for t in fw.captured["query"]]
    k = [t[0].float().cpu().numpy() for t in fw.captured["key"]]
    return q, k, fw.maps(0)


def neuron_view(loaded, encoding: Encoding, layer: int, head: int, query_index: int,
                tolerance: float = 1e-3) -> NeuronView:
    """Compute the neuron view for one (layer, head, query token)."""
    if not 0 <= layer < loaded.n_layers:
        raise InputError(f"Layer must be between 1 and {loaded.n_layers}.")
    if not 0 <= head < loaded.n_heads:
        raise InputError(f"Head must be between 1 and {loaded.n_heads}.")
    n = encoding.n_tokens
    if not 0 <= query_index < n:
        raise InputError(f"Query token must be between 1 and {n}.")
    queries, keys, att = capture_qk(loaded.model, loaded.tokenizer, encoding)
    if len(queries) != loaded.n_layers or len(keys) != loaded.n_layers:
        raise NeuronViewUnavailable(
            "Could not find one query and one key projection per layer in this architecture."
        )
    width = queries[layer].shape[-1]
    d = width // loaded.n_heads
    sl = slice(head * d, (head + 1) * d)
    q = queries[layer][query_index, sl]
    k = keys[layer][:n, sl]
    products = q[None, :] * k
    scores = products.sum(-1) / np.sqrt(d)
    soft = np.exp(scores - scores.max())
    soft /= soft.sum()
    returned = att[layer, head, query_index]
    diff = float(np.abs(soft - returned).max())
    if diff > tolerance:
        raise NeuronViewUnavailable(
            "This architecture adds terms to the query-key dot product (e.g. relative "
            f"positions), so q.k alone does not give its attention (max diff {diff:.3g})."
        )
    return NeuronView(
        tokens=list(encoding.tokens), layer=layer, head=head, query_index=query_index,
        query=q, keys=k, products=products, scores=scores, softmax=soft, returned=returned,
        max_abs_diff=diff,
    )
