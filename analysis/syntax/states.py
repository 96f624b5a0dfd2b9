"""Word vectors of every layer for a treebank (docs/METHODS.md section 10, "Word vectors").

:func:`extract_word_states` encodes the treebank (:func:`analysis.syntax.words.
encode_treebank`), runs it once through the model in length-sorted batches with
``hidden_states=True`` and keeps, for every layer ``l = 0..L`` (0 = the embedding output),
each word's vector = the mean of its pieces' hidden states ([CLS]/[SEP] left out). Vectors are
stored per layer as one float32 array over all words of the corpus.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from analysis.syntax.passes import treebank_pass
from analysis.syntax.words import EncodedTreebank, encode_treebank


@dataclass
class WordStates:
    """Word vectors of a treebank: ``layers[l]`` is [N words, D]; sentence ``s`` is rows
    ``offsets[s]:offsets[s + 1]``; gold columns per sentence."""

    layers: list[np.ndarray]
    offsets: np.ndarray
    words: list[list[str]]
    heads: list[list[int]]
    deprels: list[list[str]]
    upos: list[list[str]]
    ids: list[str] = field(default_factory=list)
    rows: list[int] = field(default_factory=list)
    skipped: int = 0
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def n_sentences(self) -> int:
        return len(self.offsets) - 1

    @property
    def n_layers(self) -> int:
        """Number of layers including the embedding output (L + 1)."""
        return len(self.layers)

    def sentence(self, s: int, layer: int) -> np.ndarray:
        """[n, D] word vectors of sentence ``s`` at ``layer``."""
        return self.layers[layer][self.offsets[s]:self.offsets[s + 1]]

    def sentences(self, layer: int) -> list[np.ndarray]:
        return [self.sentence(s, layer) for s in range(self.n_sentences)]

    def subset(self, idx) -> "WordStates":
        """The sentences ``idx`` (in that order) as a WordStates of their own."""
        idx = [int(i) for i in idx]
        lengths = [self.offsets[s + 1] - self.offsets[s] for s in idx]
        rows = np.concatenate([np.arange(self.offsets[s], self.offsets[s + 1]) for s in idx]
                              ) if idx else np.zeros(0, dtype=np.int64)
        pick = lambda xs: [xs[s] for s in idx] if xs else []  # noqa: E731
        return WordStates(
            layers=[x[rows] for x in self.layers],
            offsets=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
            words=pick(self.words), heads=pick(self.heads), deprels=pick(self.deprels),
            upos=pick(self.upos), ids=pick(self.ids), rows=pick(self.rows))


class StatesCollector:
    """Mean-pools every batch's hidden states to words into preallocated arrays; fed by
    :func:`analysis.syntax.passes.treebank_pass`."""

    def __init__(self, encoded):
        self.encoded = encoded
        lengths = [len(w) for w in encoded.words]
        self.offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        self.layers: list[np.ndarray] = []  # allocated at the first batch (widths from it)

    def __call__(self, idx, fw) -> None:
        # lazy: imported when used: torch (heavy)
        import torch

        hs = fw.hidden_states  # L + 1 tensors [B, T, D]
        B, T = hs[0].shape[:2]
        n_max = max(len(self.encoded.words[s]) for s in idx)
        pool = torch.zeros((B, n_max, T), dtype=hs[0].dtype, device=hs[0].device)
        for b, s in enumerate(idx):
            wid = torch.as_tensor(self.encoded.encodings[s].word_ids) - 1  # word 1 -> row 0
            n = len(self.encoded.words[s])
            tok = torch.nonzero((wid >= 0) & (wid < n)).squeeze(1)
            pool[b, wid[tok], tok] = 1.0
        pool = pool / pool.sum(-1, keepdim=True).clamp(min=1.0)
        if not self.layers:
            total = int(self.offsets[-1])
            self.layers = [np.zeros((total, h.shape[-1]), dtype=np.float32) for h in hs]
        for layer, h in enumerate(hs):
            pooled = torch.bmm(pool, h).float().cpu().numpy()  # [B, n_max, D]
            for b, s in enumerate(idx):
                a, e = self.offsets[s], self.offsets[s + 1]
                self.layers[layer][a:e] = pooled[b, :e - a]

    def states(self, seconds: float = 0.0) -> WordStates:
        enc = self.encoded
        return WordStates(layers=self.layers, offsets=self.offsets, words=list(enc.words),
                          heads=list(enc.heads), deprels=list(enc.deprels),
                          upos=list(enc.upos), ids=list(enc.ids), rows=list(enc.rows),
                          skipped=enc.skipped, notes=list(enc.notes), seconds=seconds)


def extract_word_states(loaded, dataset, *, max_sentences: int | None = None,
                        batch_size: int = 32,
                        progress: Callable[[int, int], None] | None = None,
                        encoded=None) -> WordStates:
    """Word vectors of every layer (embeddings included) for a treebank Dataset, in one
    batched length-sorted pass (see the module docstring)."""
    t0 = time.perf_counter()
    if encoded is None:
        encoded = encode_treebank(loaded, dataset, max_sentences)
    col = StatesCollector(encoded)
    treebank_pass(loaded, encoded, [col], attentions=False, hidden_states=True,
                  batch_size=batch_size, progress=progress)
    return col.states(time.perf_counter() - t0)


def extract_split_states(loaded, train_ds, eval_ds, *, max_sentences: int | None = None,
                         batch_size: int = 32,
                         progress: Callable[[int, int], None] | None = None
                         ) -> tuple[WordStates, WordStates]:
    """(training, evaluation) word vectors of two treebank Datasets (each capped at
    ``max_sentences``) from one batched pass over both: the vectors of
    :func:`extract_word_states` on each (to float32's rounding: the padding changes no real
    word's vector), in fuller batches (500 EWT sentences: 11,400 padded tokens, the bare
    forward's own count, against 13,534 in two passes). The evaluation's arrays are views of
    the pass's arrays."""
    parts = [encode_treebank(loaded, ds, max_sentences) for ds in (train_ds, eval_ds)]
    both = extract_word_states(loaded, None, batch_size=batch_size, progress=progress,
                               encoded=EncodedTreebank(*[
                                   getattr(parts[0], f) + getattr(parts[1], f)
                                   for f in ("encodings", "rows", "words", "heads", "deprels",
                                             "upos", "ids")]))
    out, start = [], 0
    for enc in parts:
        a, e = int(both.offsets[start]), int(both.offsets[start + len(enc)])
        out.append(WordStates(
            layers=[x[a:e] for x in both.layers],
            offsets=both.offsets[start:start + len(enc) + 1] - a, words=list(enc.words),
            heads=list(enc.heads), deprels=list(enc.deprels), upos=list(enc.upos),
            ids=list(enc.ids), rows=list(enc.rows), skipped=enc.skipped, notes=list(enc.notes),
            seconds=both.seconds))
        start += len(enc)
    return out[0], out[1]
