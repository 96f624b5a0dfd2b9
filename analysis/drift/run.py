"""The drift study over a corpus: both models on the same batches, every measure accumulated
batch by batch into a :class:`DriftResult` (docs/METHODS.md section 9).

Per-example results are small (O(layers x heads) numbers); no attention map or hidden state
outlives its batch. A corpus shard gives a :class:`DriftPartial` (:func:`map_corpus`); the
partials of any shards merge into the whole corpus's result (:func:`merge_partials`; the job is
:class:`analysis.drift.job.DriftJob`, docs/METHODS.md "Corpus jobs in shards").
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np

from analysis.drift.batched import BatchMasks, batch_cosine, batch_features, batch_rsa
from analysis.drift.pair import check_compatible, identical_weights
from analysis.drift.patterns import PatternThresholds, classify_patterns, pattern_shares
from analysis.drift.similarity import CKAAccumulator
from analysis.core.encoding import EMPTY_CORPUS, Corpus, encode
from analysis.core.errors import DataError
from analysis.core.forward import forward, forward_batches
from analysis.core.models import LoadedModel
from analysis.drift.reading import layer_cosine_ci
from analysis.core.measures import batch_stats  # Clark et al. statistics (section 3)

NOOP_STATS = ("cls", "sep", "punct")  # Clark et al. statistics whose drift is measured


@dataclass
class DriftResult:
    """Every measure of one drift study: per example (in corpus order) and aggregated."""

    before: str
    after: str
    n_layers: int
    n_heads: int
    texts: list[str]
    pairs: list[str | None]
    rows: list[int]
    n_tokens: np.ndarray  # [N]
    cosine_examples: np.ndarray  # [N, L, H]
    rsa_examples: np.ndarray  # [N, L+1] (nan where undefined)
    cka: np.ndarray  # [L+1]
    noop_before: dict  # name -> [L, H] mean over examples
    noop_after: dict
    features_before: np.ndarray  # [N, L, H, 3]
    features_after: np.ndarray
    identical: bool = False
    labels: list | None = None
    predictions: list | None = None
    label_note: str = ""
    notices: list[str] = field(default_factory=list)

    @property
    def n_examples(self) -> int:
        return len(self.texts)

    @property
    def cosine(self) -> np.ndarray:
        """[L, H] mean cosine over examples."""
        return self.cosine_examples.mean(0)

    @property
    def rsa(self) -> np.ndarray:
        """[L+1] mean of the per-example RSA (undefined examples left out)."""
        finite = np.isfinite(self.rsa_examples)
        counts = finite.sum(0)
        sums = np.where(finite, self.rsa_examples, 0.0).sum(0)
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)

    @property
    def noop_delta(self) -> dict:
        return {k: self.noop_after[k] - self.noop_before[k] for k in self.noop_before}

    @property
    def correct(self) -> np.ndarray | None:
        if self.labels is None or self.predictions is None:
            return None
        return np.array([str(p) == str(g) for p, g in zip(self.predictions, self.labels)])

    @property
    def all_ones(self) -> bool:
        return bool(np.all(self.cosine_examples > 1 - 1e-6))

    def summary(self) -> str:
        """One plain sentence about the result."""
        if self.identical or self.all_ones:
            why = "identical weights" if self.identical else "identical attention on this corpus"
            return (f"The two models have {why}: every head's cosine similarity is 1, "
                    "so fine-tuning changed nothing here.")
        cos = self.cosine
        l, h = np.unravel_index(int(np.argmin(cos)), cos.shape)
        layer_means = cos.mean(1)
        top = int(np.argmin(layer_means))
        return (f"Most changed head: layer {l + 1}, head {h + 1} (mean cosine {cos[l, h]:.3f}); "
                f"most changed layer: {top + 1} (mean {layer_means[top]:.3f}).")

    def layers_ci(self) -> list:
        """Per layer [low, high]: the 95% interval over examples of the mean head cosine (the
        reading's; None where fewer than two examples)."""
        _, lo, hi = layer_cosine_ci(self.cosine_examples)
        return [[round(float(a), 6), round(float(b), 6)] if np.isfinite(a) else None
                for a, b in zip(lo, hi)]

    def pattern_types(self, thresholds: PatternThresholds | None = None):
        return (classify_patterns(self.features_before, thresholds),
                classify_patterns(self.features_after, thresholds))

    def groups(self) -> dict[str, dict[str, np.ndarray]]:
        """Mean cosine map [L,H] per gold label and per correct/wrong prediction."""
        out: dict[str, dict[str, np.ndarray]] = {}
        if self.labels is not None:
            labs = np.array([str(x) for x in self.labels])
            out["label"] = {v: self.cosine_examples[labs == v].mean(0) for v in sorted(set(labs))}
        correct = self.correct
        if correct is not None:
            out["prediction"] = {
                name: self.cosine_examples[mask].mean(0)
                for name, mask in (("correct", correct), ("wrong", ~correct)) if mask.any()
            }
        return out

    def to_json(self, thresholds: PatternThresholds | None = None) -> dict:
        tb, ta = self.pattern_types(thresholds)

        def lst(a):
            return np.round(np.asarray(a, dtype=np.float64), 6).tolist()

        rsa = [None if not np.isfinite(x) else round(float(x), 6) for x in self.rsa]
        cka = [None if not np.isfinite(x) else round(float(x), 6) for x in self.cka]
        out = {
            "before": self.before, "after": self.after, "n_examples": self.n_examples,
            "n_layers": self.n_layers, "n_heads": self.n_heads,
            "cosine": lst(self.cosine), "rsa": rsa, "cka": cka,
            "noop_delta": {k: lst(v) for k, v in self.noop_delta.items()},
            "patterns": {"before": pattern_shares(tb), "after": pattern_shares(ta),
                         "thresholds": asdict(thresholds or PatternThresholds())},
            "identical": bool(self.identical or self.all_ones),
            "summary": self.summary(),
            "layers_ci": self.layers_ci(),
        }
        groups = self.groups()
        if groups:
            out["groups"] = {k: {g: lst(m) for g, m in v.items()} for k, v in groups.items()}
        if self.label_note:
            out["label_note"] = self.label_note
        return out


class _Measures:
    """Running per-example measures of a corpus of ``n`` examples, filled batch by batch."""

    def __init__(self, n: int, n_layers: int, n_heads: int):
        self.cosine = np.zeros((n, n_layers, n_heads), dtype=np.float32)
        self.rsa = np.full((n, n_layers + 1), np.nan, dtype=np.float64)
        self.features_before = np.zeros((n, n_layers, n_heads, 3), dtype=np.float32)
        self.features_after = np.zeros((n, n_layers, n_heads, 3), dtype=np.float32)
        self.noop_before: dict[str, np.ndarray] = {}
        self.noop_after: dict[str, np.ndarray] = {}
        self.cka = [CKAAccumulator() for _ in range(n_layers + 1)]

    def add(self, idx: list[int], group: list, out_b, out_a) -> None:
        """Add one batch: rows ``idx`` of the corpus, their encodings and both forwards."""
        rows = np.asarray(idx, dtype=np.int64)  # (a one-element tensor would index as a scalar)
        masks = BatchMasks.of(group)
        for l, (att_b, att_a) in enumerate(zip(out_b.attentions, out_a.attentions)):
            am, bm = masks.crop(att_b), masks.crop(att_a)
            self.cosine[rows, l] = batch_cosine(am, bm).numpy()
            self.features_before[rows, l] = batch_features(am, masks).numpy()
            self.features_after[rows, l] = batch_features(bm, masks).numpy()
        hidden = zip(out_b.output.hidden_states, out_a.output.hidden_states)
        for l, (hb, ha) in enumerate(hidden):
            hb, ha = hb.float(), ha.float()
            self.rsa[rows, l] = batch_rsa(hb, ha, masks.valid).numpy()
            self.cka[l].update(hb[masks.valid], ha[masks.valid])
        for store, out in ((self.noop_before, out_b), (self.noop_after, out_a)):
            stats = batch_stats(out.attentions, group, metrics=NOOP_STATS)  # {name: [B, L, H]}
            for k, v in stats.items():
                store[k] = store.get(k, 0.0) + np.asarray(v, dtype=np.float64).sum(0)


def _label_names(model) -> dict[int, str] | None:
    cfg = getattr(model, "config", None)
    id2label = getattr(cfg, "id2label", None) or {}
    return {int(k): str(v) for k, v in id2label.items()} if id2label else None


def _has_head(model) -> bool:
    return hasattr(model, "classifier") and hasattr(getattr(model, "config", None), "id2label")


def _match_labels(labels: list | None, preds: list | None,
                  names: dict[int, str] | None) -> tuple[list | None, str]:
    """Predictions to compare with the gold ``labels`` (None when they cannot be) and a note
    saying why not. ``preds`` is None when the after-model has no classification head;
    predictions are named through ``names`` (id2label), or compared as ids when every gold
    label is a label id and none is a label name."""
    if labels is None:
        return None, "The data has no label column, so no split by label or by prediction."
    if preds is None:
        return None, ("The after-model has no classification head, so correct vs wrong "
                      "predictions cannot be told apart; the split is by gold label only.")
    if not names:
        return preds, ""
    gold = {str(x) for x in labels}
    if gold & set(names.values()):
        return preds, ""
    if gold <= {str(k) for k in names}:
        by_id = {str(v): str(k) for k, v in names.items()}
        return [by_id.get(str(p), str(p)) for p in preds], ""  # the data holds label ids
    return None, (f"The after-model's labels ({', '.join(sorted(set(names.values())))}) "
                  "do not match the data's labels, so correct vs wrong cannot be shown.")


def _corpus_notices(corpus: Corpus, max_length: int) -> list[str]:
    notices = []
    if corpus.skipped:
        notices.append(f"{corpus.skipped} empty example(s) were skipped.")
    if corpus.truncated:
        notices.append(f"{corpus.truncated} example(s) were truncated to {max_length} tokens.")
    return notices


@dataclass
class DriftPartial:
    """One shard of a drift study: its examples' rows and measures, its no-op sums and CKA
    accumulators, and what the merge needs to know of the models (see :mod:`.job`)."""

    first_row: int
    meta: dict  # before, after, n_layers, n_heads, identical, names, head, max_length, notices
    rows: list[int]
    texts: list[str]
    pairs: list
    labels: list | None
    n_tokens: np.ndarray
    measures: _Measures
    predictions: list | None
    skipped: int = 0
    truncated: int = 0


def model_meta(before: LoadedModel, after: LoadedModel) -> dict:
    """What the merge needs to know of the two models (checks they can be compared)."""
    notices = check_compatible(before, after)
    head = _has_head(after.model)
    return {"before": before.spec, "after": after.spec, "n_layers": before.n_layers,
            "n_heads": before.n_heads, "identical": identical_weights(before, after),
            "names": _label_names(after.model) if head else None, "head": head,
            "max_length": before.max_length, "notices": notices}


def bytes_per_token_pair(n_layers: int, n_heads: int) -> int:
    """What one (query, key) token pair of a batch costs the drift study at its peak: both
    models' attention maps of every layer (float32), and while one layer is measured its
    cropped maps, the pattern features' difference and the masks (:mod:`analysis.drift.
    batched`). :func:`analysis.core.batching.batches` keeps a batch's pairs within
    ``max_batch_mb`` with it (the No-op study's budget)."""
    return 4 * (2 * n_layers * n_heads + 3 * n_heads + 4)


def map_corpus(before: LoadedModel, after: LoadedModel, corpus: Corpus, batch_size: int = 32,
               progress: Callable[[int, int], None] | None = None, meta: dict | None = None,
               rows: list[int] | None = None, max_batch_mb: float = 256.0) -> DriftPartial:
    """Both models on the same length-sorted batches of ``corpus`` (the before-model's
    tokenizer); every measure accumulated. ``rows`` are the corpus rows in the whole corpus.
    A batch holds at most ``batch_size`` examples and ``max_batch_mb`` of maps and their
    temporaries (:func:`bytes_per_token_pair`): long inputs get smaller batches."""
    # lazy: imported when used: torch (heavy)
    import torch

    meta = meta if meta is not None else model_meta(before, after)
    encs = corpus.encodings
    measures = _Measures(len(encs), before.n_layers, before.n_heads)
    names = meta["names"]
    preds: list | None = [None] * len(encs) if meta["head"] else None
    per_pair = bytes_per_token_pair(before.n_layers, before.n_heads)
    runs = [forward_batches(m.model, before.tokenizer, encs, max(1, int(batch_size)),
                            bytes_per_token_pair=per_pair, max_batch_mb=max_batch_mb,
                            hidden_states=True) for m in (before, after)]
    done = 0
    with torch.inference_mode():
        for (idx, out_b), (_, out_a) in zip(*runs):
            measures.add(idx, [encs[i] for i in idx], out_b, out_a)
            if preds is not None:
                for i, p in zip(idx, out_a.output.logits.argmax(-1).tolist()):
                    preds[i] = names.get(p, str(p)) if names else p
            done += len(idx)
            if progress is not None:
                progress(done, len(encs))
    rows = list(corpus.rows) if rows is None else list(rows)
    return DriftPartial(rows[0] if rows else 0, meta, rows, corpus.texts, corpus.pairs,
                        corpus.labels, np.array([e.n_tokens for e in encs], dtype=int), measures,
                        preds, corpus.skipped, corpus.truncated)


def _cat(arrays: list[np.ndarray]) -> np.ndarray:
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)


def merge_partials(partials) -> DriftResult:
    """The :class:`DriftResult` of the partials of a corpus's shards (any order): per-example
    measures in row order, no-op sums divided by the example count, CKA sums merged."""
    partials = list(partials)
    skipped, truncated = sum(p.skipped for p in partials), sum(p.truncated for p in partials)
    parts = sorted((p for p in partials if p.rows), key=lambda p: p.first_row)
    if not parts:
        raise DataError(EMPTY_CORPUS)
    meta, n = parts[0].meta, sum(len(p.rows) for p in parts)
    noop_b: dict = {}
    noop_a: dict = {}
    cka = parts[0].measures.cka
    for k, p in enumerate(parts):
        for total, store in ((noop_b, p.measures.noop_before), (noop_a, p.measures.noop_after)):
            for name, v in store.items():
                total[name] = total[name] + v if name in total else v
        if k:
            for acc, other in zip(cka, p.measures.cka):
                acc.merge(other)
    has_labels = any(p.labels is not None for p in parts)
    labels = ([x for p in parts for x in (p.labels or [None] * len(p.rows))]
              if has_labels else None)
    preds = [x for p in parts for x in p.predictions] if meta["head"] else None
    preds, label_note = _match_labels(labels, preds, meta["names"])
    return DriftResult(
        before=meta["before"], after=meta["after"], n_layers=meta["n_layers"],
        n_heads=meta["n_heads"], texts=[t for p in parts for t in p.texts],
        pairs=[x for p in parts for x in p.pairs], rows=[r for p in parts for r in p.rows],
        n_tokens=_cat([p.n_tokens for p in parts]),
        cosine_examples=_cat([p.measures.cosine for p in parts]),
        rsa_examples=_cat([p.measures.rsa for p in parts]),
        cka=np.array([acc.value() for acc in cka]),
        noop_before={k: v / n for k, v in noop_b.items()},
        noop_after={k: v / n for k, v in noop_a.items()},
        features_before=_cat([p.measures.features_before for p in parts]),
        features_after=_cat([p.measures.features_after for p in parts]),
        identical=meta["identical"], labels=labels, predictions=preds, label_note=label_note,
        notices=list(meta["notices"]) + _corpus_notices(
            Corpus([], [], skipped=skipped, truncated=truncated), meta["max_length"]),
    )


def compare_models(before: LoadedModel, after: LoadedModel, corpus: Corpus, batch_size: int = 32,
                   progress: Callable[[int, int], None] | None = None,
                   max_batch_mb: float = 256.0) -> DriftResult:
    """Run both models on the same length-sorted batches (the before-model's tokenizer) and
    accumulate every measure; ``progress(done, total)`` after each batch. The whole corpus
    is one shard: :func:`map_corpus` then :func:`merge_partials`."""
    meta = model_meta(before, after)
    if not corpus.encodings:
        raise DataError(EMPTY_CORPUS)
    return merge_partials([map_corpus(before, after, corpus, batch_size, progress, meta,
                                      max_batch_mb=max_batch_mb)])


def example_maps(before: LoadedModel, after: LoadedModel, text: str, pair: str | None = None):
    """(encoding, maps_before [L,H,n,n], maps_after) of one example, both on the same tokens."""
    enc = encode(before.tokenizer, text, pair, max_length=before.max_length)
    out_b = forward(before.model, before.tokenizer, [enc])
    out_a = forward(after.model, before.tokenizer, [enc])
    return enc, out_b.maps(0), out_a.maps(0)
