"""No-op statistics over a corpus, streamed (docs/METHODS.md sections 3 and 4).

:func:`corpus_stats` encodes the corpus once, runs it through :func:`analysis.forward.
forward_batches` (longest first, at most ``batch_size`` examples and ``max_batch_mb`` of
attention maps per batch), computes every example's statistics on the padded batch at once
(:func:`analysis.measures.batch_stats`) and adds them to running sums: no map is kept, so
memory does not grow with the corpus. Corpus values are the mean over examples; it gives the
same numbers as :func:`analysis.measures.example_stats` example by example (tested).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from analysis.encoding import encode_dataset
from analysis.forward import capture_unavailable, forward_batches
from analysis.measures import NORM_METRICS, PUNCT, WEIGHT_METRICS, batch_stats


@dataclass
class CorpusStats:
    """Per-head means over a corpus (each metric a [L, H] array)."""

    model: str
    n_layers: int
    n_heads: int
    n_examples: int
    n_truncated: int
    n_tokens: int
    metrics: dict[str, np.ndarray]
    uniform_entropy: float  # mean over examples of log(n): entropy of uniform attention
    n_pairs: int = 0
    norms_note: str | None = None
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def examples_per_second(self) -> float:
        return self.n_examples / self.seconds if self.seconds > 0 else float("nan")

    def per_layer(self, name: str) -> np.ndarray:
        return self.metrics[name].mean(axis=1)

    def to_json_dict(self, metrics: Sequence[str] | None = None) -> dict:
        names = list(metrics) if metrics is not None else [
            m for m in (*WEIGHT_METRICS, *NORM_METRICS) if m in self.metrics
        ]
        return {
            "model": self.model,
            "n_examples": int(self.n_examples),
            "n_layers": int(self.n_layers),
            "n_heads": int(self.n_heads),
            "n_truncated": int(self.n_truncated),
            "uniform_entropy": float(self.uniform_entropy),
            "metrics": {m: np.asarray(self.metrics[m], dtype=float).tolist() for m in names},
        }


def _norms_capture(loaded, norms: bool) -> tuple[tuple[str, ...], str | None]:
    """The forward's capture for attention norms and, where the architecture has no value /
    output projections to hook, the note that says so."""
    if not norms:
        return (), None
    why = capture_unavailable(loaded.model, "value_norms")
    return ((), why) if why else (("value_norms",), None)


def _corpus_notes(skipped: int, n_truncated: int, max_length: int) -> list[str]:
    notes = []
    if skipped:
        notes.append(f"Skipped {skipped} example(s) with no token the model can read.")
    if n_truncated:
        notes.append(f"{n_truncated} example(s) were longer than {max_length} tokens and "
                     "were truncated.")
    return notes


def corpus_stats(loaded, dataset, batch_size: int = 64,
                 progress: Callable[[int, int], None] | None = None,
                 punct: Sequence[str] = PUNCT, norms: bool = True,
                 max_batch_mb: float = 256.0) -> CorpusStats:
    """Stream a corpus (a Dataset with ``text`` / ``text_pair``) through the model and return
    per-head means (see the module docstring). ``progress(done, total)`` is called after every
    batch."""
    t0 = time.perf_counter()
    corpus = encode_dataset(loaded.tokenizer, dataset, loaded.max_length)
    encs, total = corpus.encodings, len(corpus.encodings)
    L, H = loaded.n_layers, loaded.n_heads
    capture, norms_note = _norms_capture(loaded, norms)
    per_pair = 4 * L * H * (3 if norms else 2)  # maps + one temporary per layer, float32
    sums: dict[str, np.ndarray] = {}
    done = 0
    for idx, fw in forward_batches(loaded.model, loaded.tokenizer, encs, max(1, int(batch_size)),
                                   bytes_per_token_pair=per_pair, max_batch_mb=max_batch_mb,
                                   capture=capture):
        atts = [a.cpu() for a in fw.attentions]
        fn = [f.cpu() for f in fw.captured["value_norms"]] if capture else None
        for k, v in batch_stats(atts, [encs[i] for i in idx], punct, fn).items():
            s = v.sum(axis=0)
            sums[k] = sums[k] + s if k in sums else s
        done += len(idx)
        del fw, atts, fn
        if progress is not None:
            progress(done, total)
    n_trunc = corpus.truncated
    return CorpusStats(
        model=loaded.spec, n_layers=L, n_heads=H, n_examples=total, n_truncated=n_trunc,
        n_tokens=int(sum(e.n_tokens for e in encs)),
        metrics={k: v / total for k, v in sums.items()},
        uniform_entropy=float(np.mean([np.log(e.n_tokens) for e in encs])),
        n_pairs=int(sum(e.pair is not None for e in encs)), norms_note=norms_note,
        seconds=time.perf_counter() - t0,
        notes=_corpus_notes(corpus.skipped, n_trunc, loaded.max_length),
    )
