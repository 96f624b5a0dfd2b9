"""Neuron view: query and key vectors of one head, captured with forward hooks on the real model.

For a layer, head and query token ``i`` it returns q_i, every k_j, their elementwise product,
the scaled dot products q_i.k_j / sqrt(d) and their softmax. The softmax is checked against
the attention the model itself returned, so the view never shows numbers the model did not use.

Hooks go on the query and key projections, found by name (``query``/``key`` in BERT, RoBERTa,
ELECTRA, ALBERT...; ``q_lin``/``k_lin`` in DistilBERT). ALBERT shares one layer module across
all layers, so outputs are recorded in call order: the l-th call is layer l
(:func:`analysis.core.hooks.capture`). Formulas: docs/METHODS.md section 2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.core.encoding import Encoding
from analysis.core.errors import InputError
from analysis.core.forward import CaptureUnavailable, forward


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


@dataclass
class QueryKeys:
    """Every layer's query and key projections of one input, captured in one forward, and the
    attention maps the model returned; every (layer, head, query token) view derives from it
    without running the model again."""

    tokens: list[str]
    queries: list[np.ndarray]  # [L] of [n, D]
    keys: list[np.ndarray]  # [L] of [n, D]
    attentions: np.ndarray  # [L, H, n, n]
    n_heads: int

    @property
    def n_layers(self) -> int:
        return len(self.queries)

    def head(self, layer: int, head: int) -> tuple[np.ndarray, np.ndarray]:
        """(q [n, d], k [n, d]) of one head: its slice of the projections."""
        d = self.queries[layer].shape[-1] // self.n_heads
        sl = slice(head * d, (head + 1) * d)
        n = len(self.tokens)
        return self.queries[layer][:n, sl], self.keys[layer][:n, sl]


def capture_qk(model, tokenizer, encoding: Encoding):
    """Forward once with the query and key projections captured; returns (queries [L][n, D],
    keys [L][n, D], attentions [L, H, n, n]) as CPU numpy arrays."""
    try:
        fw = forward(model, tokenizer, [encoding], capture=("query", "key"))
    except CaptureUnavailable as exc:
        raise NeuronViewUnavailable(str(exc)) from None
    q = [t[0].float().cpu().numpy() for t in fw.captured["query"]]
    k = [t[0].float().cpu().numpy() for t in fw.captured["key"]]
    return q, k, fw.maps(0)


def query_keys(loaded, encoding: Encoding) -> QueryKeys:
    """One forward of ``encoding`` with every layer's q and k captured (cache this per input:
    changing the layer, head or query token needs no further forward)."""
    queries, keys, att = capture_qk(loaded.model, loaded.tokenizer, encoding)
    if len(queries) != loaded.n_layers or len(keys) != loaded.n_layers:
        raise NeuronViewUnavailable(
            "Could not find one query and one key projection per layer in this architecture."
        )
    return QueryKeys(tokens=list(encoding.tokens), queries=queries, keys=keys, attentions=att,
                     n_heads=loaded.n_heads)


def view_of(qk: QueryKeys, layer: int, head: int, query_index: int,
            tolerance: float = 1e-3) -> NeuronView:
    """The neuron view of one (layer, head, query token) from captured q and k (0-based)."""
    if not 0 <= layer < qk.n_layers:
        raise InputError(f"Layer must be between 1 and {qk.n_layers}.")
    if not 0 <= head < qk.n_heads:
        raise InputError(f"Head must be between 1 and {qk.n_heads}.")
    n = len(qk.tokens)
    if not 0 <= query_index < n:
        raise InputError(f"Query token must be between 1 and {n}.")
    qh, k = qk.head(layer, head)
    d = qh.shape[-1]
    q = qh[query_index]
    products = q[None, :] * k
    scores = products.sum(-1) / np.sqrt(d)
    soft = np.exp(scores - scores.max())
    soft /= soft.sum()
    returned = qk.attentions[layer, head, query_index]
    diff = float(np.abs(soft - returned).max())
    if diff > tolerance:
        raise NeuronViewUnavailable(
            "This architecture adds terms to the query-key dot product (e.g. relative "
            f"positions), so q.k alone does not give its attention (max diff {diff:.3g})."
        )
    return NeuronView(
        tokens=list(qk.tokens), layer=layer, head=head, query_index=query_index,
        query=q, keys=k, products=products, scores=scores, softmax=soft, returned=returned,
        max_abs_diff=diff,
    )


def neuron_view(loaded, encoding: Encoding, layer: int, head: int, query_index: int,
                tolerance: float = 1e-3) -> NeuronView:
    """Compute the neuron view for one (layer, head, query token): one forward, then
    :func:`view_of`. Indices are checked before the model runs."""
    if not 0 <= layer < loaded.n_layers:
        raise InputError(f"Layer must be between 1 and {loaded.n_layers}.")
    if not 0 <= head < loaded.n_heads:
        raise InputError(f"Head must be between 1 and {loaded.n_heads}.")
    if not 0 <= query_index < encoding.n_tokens:
        raise InputError(f"Query token must be between 1 and {encoding.n_tokens}.")
    return view_of(query_keys(loaded, encoding), layer, head, query_index, tolerance)
