"""No-op statistics over a corpus, streamed (docs/METHODS.md sections 3 and 4).

:func:`corpus_stats` encodes the corpus once, runs it through :func:`analysis.core.forward.
forward_batches` (longest first, at most ``batch_size`` examples and ``max_batch_mb`` of
attention maps per batch), computes every example's statistics on the padded batch at once
(:func:`analysis.core.measures.batch_stats`) and adds them to running sums: no map is kept, so
memory does not grow with the corpus. Corpus values are the mean over examples; it gives the
same numbers as :func:`analysis.core.measures.example_stats` example by example (tested).

Beside the sums, every metric's per-example layer means (the mean over the layer's heads) and
all-head mean are summed squared (:func:`square_sums`), so the layer and corpus means the
reading states have a 95% interval over examples (:meth:`CorpusStats.layer_ci`,
:meth:`CorpusStats.overall_ci`; docs/METHODS.md section 3, "Intervals").
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from analysis.core.encoding import EMPTY_CORPUS, encode_dataset
from analysis.core.errors import DataError
from analysis.core.forward import capture_unavailable, forward_batches
from analysis.core.measures import CLI_METRICS, PUNCT, batch_stats
from analysis.core.execution.corpus import add_arrays, run_local
from analysis.core.models import load_model
from analysis.core.study import Field, Schema, StudyResult
from analysis.noop.gradients import GradientImportance

Z95 = 1.959964  # the normal 97.5% quantile
SPECIAL = "special"  # [CLS] + [SEP], summed per example before squaring


def square_sums(stats: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Sums over a batch's examples of squared summaries of ``stats`` ({name: [B, L, H]}):
    ``layer:<name>`` [L] (each example's mean over the layer's heads, squared) and
    ``all:<name>`` (scalar; its mean over every head, squared); ``special`` is cls + sep."""
    vals = dict(stats)
    if "cls" in vals and "sep" in vals:
        vals[SPECIAL] = vals["cls"] + vals["sep"]
    out = {}
    for k, v in vals.items():
        v = np.asarray(v, dtype=np.float64)
        out[f"layer:{k}"] = (v.mean(axis=2) ** 2).sum(axis=0)
        out[f"all:{k}"] = np.asarray((v.mean(axis=(1, 2)) ** 2).sum())
    return out


def normal_ci(mean, mean_sq, n: int):
    """95% interval of a mean over ``n`` examples from the mean and the mean of squares
    (normal approximation, the sample variance with n - 1): (low, high), NaN for n < 2."""
    mean, mean_sq = np.asarray(mean, float), np.asarray(mean_sq, float)
    if n < 2:
        nan = np.full(mean.shape, np.nan)
        return nan, nan.copy()
    var = np.maximum(mean_sq - mean ** 2, 0.0) * n / (n - 1)
    half = Z95 * np.sqrt(var / n)
    return mean - half, mean + half


@dataclass
class CorpusStats(StudyResult):
    """Per-head means over a corpus (each metric a [L, H] array); with ``gradients`` (the
    command's ``--gradients``), the gradient importance over the same corpus. Its JSON (the
    command's, the page's download): :data:`SCHEMA`, the metrics of :data:`CLI_METRICS`."""

    SCHEMA = Schema((
        Field("model", "the model's spec"),
        Field("n_examples", "examples read (unreadable ones skipped)"),
        Field("n_layers", "layers"),
        Field("n_heads", "heads per layer"),
        Field("n_truncated", "examples cut to the model's (or the server's) token limit"),
        Field("uniform_entropy", "mean over examples of log(n tokens): uniform attention's "
                                 "entropy, in nats"),
        Field("metrics", "metric -> layers x heads (0-indexed) mean over examples: shares of "
                         "attention to [CLS], [SEP], punctuation, self, the previous and next "
                         "token, and the entropy in nats"),
        Field("layers_ci", "metric (and 'special' = cls + sep) -> per layer [low, high], the "
                           "95% interval over examples of the layer's mean", optional=True),
        Field("gradient_importance", "with --gradients: {loss, note, n_examples, per_head: "
                                     "category -> layers x heads mean |dL/dA|}", optional=True),
    ))

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
    # mean over examples of the squared summaries of square_sums (empty: no intervals)
    squares: dict[str, np.ndarray] = field(default_factory=dict)
    gradients: GradientImportance | None = None  # the CLI's --gradients

    @property
    def examples_per_second(self) -> float:
        return self.n_examples / self.seconds if self.seconds > 0 else float("nan")

    def per_layer(self, name: str) -> np.ndarray:
        if name == SPECIAL:
            return self.per_layer("cls") + self.per_layer("sep")
        return self.metrics[name].mean(axis=1)

    def overall(self, name: str) -> float:
        if name == SPECIAL:
            return self.overall("cls") + self.overall("sep")
        return float(self.metrics[name].mean())

    def layer_ci(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        """95% interval over examples of every layer's mean of ``name`` (``"special"`` =
        cls + sep): (low [L], high [L]); None without the squares."""
        sq = self.squares.get(f"layer:{name}")
        if sq is None:
            return None
        return normal_ci(self.per_layer(name), sq, self.n_examples)

    def overall_ci(self, name: str) -> tuple[float, float] | None:
        """95% interval over examples of the mean of ``name`` over every head."""
        sq = self.squares.get(f"all:{name}")
        if sq is None:
            return None
        lo, hi = normal_ci(self.overall(name), sq, self.n_examples)
        return float(lo), float(hi)

    def json_fields(self) -> dict:
        names = CLI_METRICS
        out = {
            "model": self.model,
            "n_examples": int(self.n_examples),
            "n_layers": int(self.n_layers),
            "n_heads": int(self.n_heads),
            "n_truncated": int(self.n_truncated),
            "uniform_entropy": float(self.uniform_entropy),
            "metrics": {m: np.asarray(self.metrics[m], dtype=float) for m in names},
            **self._ci_json(names),
        }
        if self.gradients is not None:
            out["gradient_importance"] = self.gradients
        return out

    @classmethod
    def from_json(cls, data: dict) -> "CorpusStats":
        """The statistics back from their JSON (the metrics as arrays; what the JSON does not
        keep, the token counts and the squares behind the intervals, is left empty)."""
        cls.SCHEMA.check(data)
        grads = data.get("gradient_importance")
        return cls(model=data["model"], n_layers=data["n_layers"], n_heads=data["n_heads"],
                   n_examples=data["n_examples"], n_truncated=data["n_truncated"], n_tokens=0,
                   metrics={k: np.asarray(v, dtype=float) for k, v in data["metrics"].items()},
                   uniform_entropy=data["uniform_entropy"],
                   gradients=GradientImportance.from_json(grads) if grads else None)

    def _ci_json(self, names) -> dict:
        """``layers_ci``: {metric: [[low, high] per layer]} (and ``special``), where the
        squares exist."""
        out = {}
        for m in [*names, SPECIAL]:
            ci = self.layer_ci(m) if (m in self.metrics or m == SPECIAL) else None
            if ci is not None:
                out[m] = np.stack(ci, axis=1).tolist()
        return {"layers_ci": out} if out else {}


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


@dataclass
class NoopPartial:
    """The sums of one shard (see :class:`NoopJob`)."""

    first_row: int
    model: str
    n_layers: int
    n_heads: int
    sums: dict[str, np.ndarray]  # metric -> [L, H] sum over the shard's examples
    squares: dict[str, np.ndarray] = field(default_factory=dict)  # square_sums, summed
    n_examples: int = 0
    n_tokens: int = 0
    sum_log_n: float = 0.0  # sum of log(n) (the uniform entropy's numerator)
    n_pairs: int = 0
    skipped: int = 0
    truncated: int = 0
    max_length: int = 512
    norms_note: str | None = None


@dataclass
class NoopJob:
    """:func:`corpus_stats` as map/merge (:mod:`analysis.core.execution.corpus`): every statistic
    is a
    sum over examples, divided by the example count once the shards are merged."""

    spec: str
    batch_size: int = 64
    punct: Sequence[str] = PUNCT
    norms: bool = True
    max_batch_mb: float = 256.0

    def load(self):
        return load_model(self.spec)

    def map(self, loaded, shard, rows, progress=None) -> NoopPartial:
        rows = list(rows)
        L, H = loaded.n_layers, loaded.n_heads
        capture, norms_note = _norms_capture(loaded, self.norms)
        part = NoopPartial(rows[0] if rows else 0, loaded.spec, L, H, {},
                           max_length=loaded.max_length, norms_note=norms_note)
        try:
            corpus = encode_dataset(loaded.tokenizer, shard, loaded.max_length)
        except DataError:  # an empty shard, or none of its examples readable
            part.skipped = len(rows)
            return part
        encs, total = corpus.encodings, len(corpus.encodings)
        per_pair = 4 * L * H * (3 if self.norms else 2)  # maps + one temporary per layer
        done = 0
        for idx, fw in forward_batches(loaded.model, loaded.tokenizer, encs,
                                       max(1, int(self.batch_size)), bytes_per_token_pair=per_pair,
                                       max_batch_mb=self.max_batch_mb, capture=capture):
            atts = [a.cpu() for a in fw.attentions]
            fn = [f.cpu() for f in fw.captured["value_norms"]] if capture else None
            stats = batch_stats(atts, [encs[i] for i in idx], self.punct, fn)
            add_arrays(part.sums, {k: v.sum(axis=0) for k, v in stats.items()})
            add_arrays(part.squares, square_sums(stats))
            done += len(idx)
            del fw, atts, fn
            if progress is not None:
                progress(done, total)
        part.n_examples, part.skipped, part.truncated = total, corpus.skipped, corpus.truncated
        part.n_tokens = int(sum(e.n_tokens for e in encs))
        part.sum_log_n = float(np.sum([np.log(e.n_tokens) for e in encs]))
        part.n_pairs = int(sum(e.pair is not None for e in encs))
        return part

    def merge(self, partials) -> CorpusStats:
        parts = sorted(partials, key=lambda p: p.first_row)
        total = sum(p.n_examples for p in parts)
        if not total:
            raise DataError(EMPTY_CORPUS)
        sums: dict[str, np.ndarray] = {}
        squares: dict[str, np.ndarray] = {}
        for p in parts:
            add_arrays(sums, p.sums)
            add_arrays(squares, p.squares)
        first = parts[0]
        n_trunc = sum(p.truncated for p in parts)
        return CorpusStats(
            model=first.model, n_layers=first.n_layers, n_heads=first.n_heads,
            n_examples=total, n_truncated=n_trunc, n_tokens=sum(p.n_tokens for p in parts),
            metrics={k: v / total for k, v in sums.items()},
            uniform_entropy=float(sum(p.sum_log_n for p in parts) / total),
            n_pairs=sum(p.n_pairs for p in parts), norms_note=first.norms_note,
            notes=_corpus_notes(sum(p.skipped for p in parts), n_trunc, first.max_length),
            squares={k: v / total for k, v in squares.items()},
        )


def corpus_stats(loaded, dataset, batch_size: int = 64,
                 progress: Callable[[int, int], None] | None = None,
                 punct: Sequence[str] = PUNCT, norms: bool = True,
                 max_batch_mb: float = 256.0) -> CorpusStats:
    """Stream a corpus (a Dataset with ``text`` / ``text_pair``) through the model and return
    per-head means (see the module docstring). ``progress(done, total)`` is called after every
    batch. This is :class:`NoopJob` on the whole corpus as one shard."""
    t0 = time.perf_counter()
    job = NoopJob(loaded.spec, batch_size, punct, norms, max_batch_mb)
    stats = run_local(job, loaded, dataset, progress)
    stats.seconds = time.perf_counter() - t0
    return stats
