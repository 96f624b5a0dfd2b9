"""Before/after fine-tuning: what changed in each head and layer, over a corpus.

Measures (DESIGN.md section 6):

- **Per-head cosine** (Kovaleva et al. 2019): for every example and head,
  ``cos(flatten(A_before[l,h]), flatten(A_after[l,h]))`` over the example's real tokens
  (the map cropped to ``[:n, :n]``); the mean over examples is a layers x heads map where a
  low value means the head changed most.
- **RSA** (Merchant et al. 2020): per layer (embeddings included, L+1 values) and example, the
  Pearson correlation between the upper triangles (i < j) of the token-by-token cosine-similarity
  matrices of the two models' hidden states on the example's real tokens (specials included).
  Aggregation: the unweighted mean of the per-example correlations; examples whose similarity
  triangle is constant (fewer than two distinct values) are left out of that layer's mean.
- **Linear CKA** (Kornblith et al. 2019) per layer over all real tokens of the corpus, on
  column-centred representations: ``||Yc^T Xc||_F^2 / (||Xc^T Xc||_F ||Yc^T Yc||_F)``. The
  d x d products and the column sums are accumulated batch by batch, so memory stays flat in
  corpus size (centring uses ``Xc^T Yc = X^T Y - sx sy^T / N``).
- **No-op drift**: the Clark et al. statistics (``analysis.stats.example_stats``: attention to
  [CLS], [SEP], punctuation, ...) before and after, and their difference per head.
- **Pattern types** (Kovaleva's five classes) from three transparent features per map:
  ``vertical`` = mean over rows of the mass on [CLS]/[SEP] columns; ``diagonal`` = mean over
  rows of the mass on i-1, i and i+1; ``block`` = 1 minus the mean total-variation distance
  between each row and the uniform distribution over the non-special tokens of the row's own
  segment (1 = perfectly uniform within segments). :func:`classify_patterns` applies visible,
  adjustable thresholds.

Both models run on the same length-sorted padded batches; per-example results are small
(O(layers x heads) numbers), no attention map or hidden state outlives its batch.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Callable, Sequence

import numpy as np

from analysis.attention import Encoding, InputError, encode, forward, length_sorted_batches
from analysis.errors import DataError
from analysis.models import (LoadedModel, checkpoint_stamp, load_config, load_model,  # noqa: F401
                             normalise_spec)

PATTERN_TYPES = ("vertical", "diagonal", "vertical+diagonal", "block", "heterogeneous")
FEATURE_NAMES = ("vertical", "diagonal", "block")
NOOP_KEYS = ("cls", "sep", "punct")


class CompareError(InputError):
    """Two checkpoints cannot be compared (message is user-facing, one line)."""


# ---------------------------------------------------------------------------------------------
# Pure measures on one example (numpy): the reference definitions


def head_cosine(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Cosine of the flattened maps per head: [L,H,n,n] x [L,H,n,n] -> [L,H] (float64)."""
    a = np.asarray(before, dtype=np.float64).reshape(*before.shape[:-2], -1)
    b = np.asarray(after, dtype=np.float64).reshape(*after.shape[:-2], -1)
    denom = np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)
    return np.divide((a * b).sum(-1), denom, out=np.zeros(denom.shape), where=denom > 0)


def token_similarity(hidden: np.ndarray) -> np.ndarray:
    """Token-by-token cosine-similarity matrix of one layer's hidden states [n,d] -> [n,n]."""
    h = np.asarray(hidden, dtype=np.float64)
    norm = np.linalg.norm(h, axis=-1, keepdims=True)
    h = np.divide(h, norm, out=np.zeros_like(h), where=norm > 0)
    return h @ h.T


def rsa(hidden_before: np.ndarray, hidden_after: np.ndarray) -> float:
    """Pearson r between the upper triangles (i<j) of the two token-similarity matrices.

    ``hidden_*`` are one layer's states on the same n tokens, [n, d] (d may differ).
    Returns nan when a triangle is constant (r is undefined)."""
    n = len(hidden_before)
    iu = np.triu_indices(n, k=1)
    x = token_similarity(hidden_before)[iu]
    y = token_similarity(hidden_after)[iu]
    x, y = x - x.mean(), y - y.mean()
    denom = math.sqrt(float((x * x).sum() * (y * y).sum()))
    return float((x * y).sum() / denom) if denom > 1e-12 else float("nan")


def linear_cka(x: np.ndarray, y: np.ndarray) -> float:
    """Linear CKA (Kornblith et al. 2019) of representations [N, d1], [N, d2] of the same N
    items: ||Yc^T Xc||_F^2 / (||Xc^T Xc||_F ||Yc^T Yc||_F) with column-centred Xc, Yc."""
    acc = CKAAccumulator()
    acc.update(x, y)
    return acc.value()


class CKAAccumulator:
    """Streams linear CKA: accumulates X^T X, Y^T Y, Y^T X and the column sums.

    Rows are shifted by a fixed vector (the first chunk's mean) before accumulating; centred
    products do not depend on the shift, and it keeps the float32 chunk products away from the
    cancellation that large column means would cause. Running sums are float64."""

    def __init__(self) -> None:
        self.n = 0
        self.xtx = self.yty = self.ytx = self.sx = self.sy = None
        self.cx = self.cy = None

    def update(self, x, y) -> None:
        import torch

        x = torch.as_tensor(np.asarray(x) if not torch.is_tensor(x) else x)
        y = torch.as_tensor(np.asarray(y) if not torch.is_tensor(y) else y)
        if len(x) != len(y):
            raise ValueError("CKA needs the same items in both representations.")
        if not len(x):
            return
        dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
        x, y = x.to(dtype), y.to(dtype)
        if self.xtx is None:
            self.cx, self.cy = x.mean(0), y.mean(0)
            self.xtx = np.zeros((x.shape[1], x.shape[1]))
            self.yty = np.zeros((y.shape[1], y.shape[1]))
            self.ytx = np.zeros((y.shape[1], x.shape[1]))
            self.sx = np.zeros(x.shape[1])
            self.sy = np.zeros(y.shape[1])
        x, y = x - self.cx, y - self.cy
        self.n += len(x)
        self.xtx += (x.T @ x).double().numpy()
        self.yty += (y.T @ y).double().numpy()
        self.ytx += (y.T @ x).double().numpy()
        self.sx += x.double().sum(0).numpy()
        self.sy += y.double().sum(0).numpy()

    def value(self) -> float:
        if not self.n:
            return float("nan")
        n = self.n
        xtx = self.xtx - np.outer(self.sx, self.sx) / n
        yty = self.yty - np.outer(self.sy, self.sy) / n
        ytx = self.ytx - np.outer(self.sy, self.sx) / n
        denom = np.linalg.norm(xtx) * np.linalg.norm(yty)
        return float(np.linalg.norm(ytx) ** 2 / denom) if denom > 0 else float("nan")


def pattern_features(attn: np.ndarray, special: np.ndarray, segments: np.ndarray) -> np.ndarray:
    """Features of maps [..., n, n] of one example -> [..., 3] (vertical, diagonal, block).

    - vertical: (1/n) sum_i sum_{j special} A[i,j]  (mass on the [CLS]/[SEP] columns)
    - diagonal: (1/n) sum_i (A[i,i-1] + A[i,i] + A[i,i+1])
    - block: 1 - (1/n) sum_i TV(A[i,:], U_i), U_i uniform over the non-special tokens of
      token i's segment, TV(p, q) = 0.5 * sum_j |p_j - q_j|.
    """
    a = np.asarray(attn, dtype=np.float64)
    n = a.shape[-1]
    special = np.asarray(special, dtype=bool)
    seg = np.asarray(segments)
    vertical = (a[..., :, special]).sum(-1).mean(-1)
    band = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :]) <= 1
    diagonal = (a * band).sum(-1).mean(-1)
    uniform = ((seg[:, None] == seg[None, :]) & ~special[None, :]).astype(np.float64)
    counts = uniform.sum(-1, keepdims=True)
    uniform = np.divide(uniform, counts, out=np.zeros_like(uniform), where=counts > 0)
    tv = 0.5 * np.abs(a - uniform).sum(-1)
    block = 1.0 - tv.mean(-1)
    return np.stack([vertical, diagonal, block], axis=-1)


@dataclass(frozen=True)
class PatternThresholds:
    """Rules, checked in this order (first match wins):

    1. vertical+diagonal: vertical >= ``mixed`` and diagonal >= ``mixed``
    2. vertical: vertical >= ``vertical``
    3. diagonal: diagonal >= ``diagonal``
    4. block: block >= ``block``
    5. heterogeneous: everything else
    """

    vertical: float = 0.5
    diagonal: float = 0.5
    mixed: float = 0.3
    block: float = 0.6

    def describe(self) -> list[str]:
        return [
            f"vertical+diagonal: mass on [CLS]/[SEP] >= {self.mixed:.2f} and on i-1, i, i+1 "
            f">= {self.mixed:.2f}",
            f"vertical: mass on [CLS]/[SEP] >= {self.vertical:.2f}",
            f"diagonal: mass on i-1, i, i+1 >= {self.diagonal:.2f}",
            f"block: closeness to uniform attention within the own segment >= {self.block:.2f}",
            "heterogeneous: none of the above",
        ]


def classify_patterns(features: np.ndarray, thresholds: PatternThresholds | None = None) -> np.ndarray:
    """Type index into PATTERN_TYPES for features [..., 3] (see PatternThresholds)."""
    t = thresholds or PatternThresholds()
    f = np.asarray(features)
    v, d, b = f[..., 0], f[..., 1], f[..., 2]
    out = np.full(v.shape, PATTERN_TYPES.index("heterogeneous"), dtype=np.int8)
    rules = [  # reversed so that earlier rules overwrite later ones
        (b >= t.block, "block"),
        (d >= t.diagonal, "diagonal"),
        (v >= t.vertical, "vertical"),
        ((v >= t.mixed) & (d >= t.mixed), "vertical+diagonal"),
    ]
    for mask, name in rules:
        out[mask] = PATTERN_TYPES.index(name)
    return out


def pattern_shares(types: np.ndarray) -> dict[str, float]:
    """Share of each pattern type among all classified maps (sums to 1)."""
    types = np.asarray(types).ravel()
    total = max(len(types), 1)
    return {name: float((types == k).sum() / total) for k, name in enumerate(PATTERN_TYPES)}


def pattern_transitions(types_before: np.ndarray, types_after: np.ndarray) -> np.ndarray:
    """[5, 5] counts of maps of type i before and type j after (same example and head)."""
    k = len(PATTERN_TYPES)
    out = np.zeros((k, k), dtype=np.int64)
    np.add.at(out, (np.asarray(types_before).ravel(), np.asarray(types_after).ravel()), 1)
    return out


# ---------------------------------------------------------------------------------------------
# Batched versions (torch), one padded batch at a time


def _batch_masks(encodings: Sequence[Encoding]):
    import torch

    lengths = torch.tensor([e.n_tokens for e in encodings])
    t = int(lengths.max())
    valid = torch.arange(t)[None, :] < lengths[:, None]  # [B,T]
    special = torch.zeros((len(encodings), t), dtype=torch.bool)
    segments = torch.full((len(encodings), t), -1, dtype=torch.int8)
    for b, e in enumerate(encodings):
        special[b, : e.n_tokens] = torch.from_numpy(np.asarray(e.special, dtype=bool))
        segments[b, : e.n_tokens] = torch.from_numpy(np.asarray(e.segments, dtype=np.int8))
    return lengths, valid, special, segments


class BatchMasks:
    """Masks of one padded batch, built once and shared by every layer and both models."""

    def __init__(self, valid, special, segments):
        import torch

        f = torch.float32
        self.valid = valid  # [B,T] bool
        self.n = valid.sum(-1).to(f)  # [B] real tokens
        pair = valid[:, :, None] & valid[:, None, :]
        self.pair = pair[:, None].to(f)  # [B,1,T,T] real (query, key) cells
        self.special = (special & valid).to(f)[:, None, :, None]  # [B,1,T,1] special keys
        same = (segments[:, :, None] == segments[:, None, :]) & ~special[:, None, :] & pair
        same = same.to(f)
        self.uniform = (same / same.sum(-1, keepdim=True).clamp_min(1.0))[:, None]  # [B,1,T,T]


def _cosine(am, bm) -> "torch.Tensor":
    """Cosine of masked maps [B,H,T,T] (padding cells already zero) -> [B,H]."""
    import torch

    fa, fb = am.flatten(2), bm.flatten(2)
    dot = torch.linalg.vecdot(fa, fb)
    denom = torch.linalg.vector_norm(fa, dim=-1) * torch.linalg.vector_norm(fb, dim=-1)
    return torch.where(denom > 0, dot / denom.clamp_min(1e-30), torch.zeros_like(dot))


def _features(am, masks: BatchMasks) -> "torch.Tensor":
    """Pattern features of masked maps [B,H,T,T] (padding cells already zero) -> [B,H,3]."""
    import torch

    n = masks.n[:, None]
    vertical = (am @ masks.special).sum((-1, -2)) / n
    diagonal = sum(torch.diagonal(am, k, -2, -1).sum(-1) for k in (-1, 0, 1)) / n
    tv = (am - masks.uniform).abs_().sum((-1, -2))  # padding rows: 0 - 0
    return torch.stack([vertical, diagonal, 1.0 - 0.5 * tv / n], dim=-1)


def batch_head_cosine(att_before, att_after, valid) -> "torch.Tensor":
    """Per-example per-head cosine for one layer: [B,H,T,T] x2, valid [B,T] -> [B,H]."""
    pair = (valid[:, :, None] & valid[:, None, :])[:, None].to(att_before.dtype)
    return _cosine(att_before * pair, att_after * pair)


def batch_pattern_features(att, valid, special, segments) -> "torch.Tensor":
    """Pattern features for one layer: att [B,H,T,T] -> [B,H,3] (see pattern_features)."""
    masks = BatchMasks(valid, special, segments)
    return _features(att.float() * masks.pair, masks)


def batch_rsa(hid_before, hid_after, valid) -> "torch.Tensor":
    """Per-example RSA for one layer: [B,T,d1], [B,T,d2], valid [B,T] -> [B] (nan if undefined)."""
    import torch

    def sims(h):
        h = torch.nn.functional.normalize(h.float(), dim=-1)
        return h @ h.transpose(1, 2)

    t = valid.shape[1]
    upper = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
    mask = (upper[None] & valid[:, :, None] & valid[:, None, :]).float()
    count = mask.sum((1, 2)).clamp_min(1.0)
    x, y = sims(hid_before), sims(hid_after)
    xc = (x - ((x * mask).sum((1, 2)) / count)[:, None, None]) * mask
    yc = (y - ((y * mask).sum((1, 2)) / count)[:, None, None]) * mask
    denom = torch.sqrt((xc * xc).sum((1, 2)) * (yc * yc).sum((1, 2)))
    r = (xc * yc).sum((1, 2)) / denom.clamp_min(1e-30)
    return torch.where(denom > 1e-10, r, torch.full_like(r, float("nan"))).double()


# ---------------------------------------------------------------------------------------------
# Models: loading and compatibility


def has_classifier(spec: str) -> bool:
    """True when the checkpoint's config names a sequence-classification architecture."""
    try:
        config = load_config(spec)
    except Exception:
        return False
    archs = getattr(config, "architectures", None) or []
    return any(a.endswith("ForSequenceClassification") for a in archs)


def load_after(spec: str, loader: Callable[[str], LoadedModel] = load_model) -> LoadedModel:
    """Load the fine-tuned checkpoint, keeping its classification head when it has one."""
    if has_classifier(spec):
        from transformers import AutoModelForSequenceClassification

        return load_model(spec, model_class=AutoModelForSequenceClassification)
    return loader(spec)


def _vocab(tokenizer) -> dict:
    try:
        return dict(tokenizer.get_vocab())
    except Exception:  # pragma: no cover - every HF tokenizer has get_vocab
        return {}


PROBE = "Hello, WORLD! The café's crème brûlée wasn't cheap."


def check_compatible(before: LoadedModel, after: LoadedModel) -> list[str]:
    """Raise CompareError when the two checkpoints cannot be compared head by head.

    Returns notices (e.g. different model types with the same shape)."""
    if (before.n_layers, before.n_heads) != (after.n_layers, after.n_heads):
        raise CompareError(
            f"The models have different shapes: before has {before.shape}, after has "
            f"{after.shape}; heads can only be compared between checkpoints of one architecture."
        )
    vb, va = _vocab(before.tokenizer), _vocab(after.tokenizer)
    if vb != va:
        only_b = len(set(vb) - set(va))
        only_a = len(set(va) - set(vb))
        raise CompareError(
            f"The models use different tokenizers (vocabularies of {len(vb)} and {len(va)} "
            f"pieces, {only_b} only in before, {only_a} only in after), so their maps are over "
            "different tokens and cannot be compared."
        )
    pb = before.tokenizer(PROBE, "pair")["input_ids"]
    pa = after.tokenizer(PROBE, "pair")["input_ids"]
    if list(pb) != list(pa):
        raise CompareError(
            "The models' tokenizers split the same text differently (casing or normalisation "
            "differs), so their maps are over different tokens and cannot be compared."
        )
    notices = []
    if before.model_type != after.model_type:
        notices.append(f"Model types differ ({before.model_type} vs {after.model_type}).")
    return notices


def _encoder(model):
    return getattr(model, "base_model", model)


def identical_weights(before: LoadedModel, after: LoadedModel) -> bool:
    """True when every encoder parameter of the two checkpoints is equal."""
    import torch

    sb = _encoder(before.model).state_dict()
    sa = _encoder(after.model).state_dict()
    if sb.keys() != sa.keys():
        return False
    return all(sb[k].shape == sa[k].shape and torch.equal(sb[k], sa[k]) for k in sb)


# ---------------------------------------------------------------------------------------------
# Corpus


@dataclass
class Corpus:
    """Encoded examples with their source rows, texts and optional gold labels."""

    encodings: list[Encoding]
    rows: list[int]
    labels: list | None = None
    skipped: int = 0
    truncated: int = 0

    @property
    def texts(self) -> list[str]:
        return [e.text for e in self.encodings]

    @property
    def pairs(self) -> list[str | None]:
        return [e.pair for e in self.encodings]


def encode_corpus(tokenizer, texts: Sequence[str], pairs: Sequence[str | None] | None = None,
                  labels: Sequence | None = None, max_length: int = 512,
                  max_examples: int | None = None) -> Corpus:
    """Encode examples, skipping blank ones; raise DataError when nothing is left."""
    pairs = list(pairs) if pairs is not None else [None] * len(texts)
    encs, rows, labs, skipped, truncated = [], [], [], 0, 0
    for i, (text, pair) in enumerate(zip(texts, pairs)):
        if max_examples is not None and len(encs) >= max_examples:
            break
        if pair is not None and not str(pair).strip():
            pair = None
        try:
            enc = encode(tokenizer, text, pair, max_length=max_length)
        except InputError:
            skipped += 1
            continue
        truncated += int(enc.truncated)
        encs.append(enc)
        rows.append(i)
        if labels is not None:
            labs.append(labels[i])
    if not encs:
        raise DataError("The corpus is empty: it holds no example with text to compare on.")
    return Corpus(encs, rows, labs if labels is not None else None, skipped, truncated)


def corpus_from_dataset(tokenizer, dataset, max_length: int = 512,
                        max_examples: int | None = None) -> Corpus:
    """Corpus from a datasets.Dataset with columns text, optional text_pair and label."""
    if dataset is None or len(dataset) == 0:
        raise DataError("The corpus is empty: it holds no example with text to compare on.")
    cols = dataset.column_names
    n = len(dataset) if max_examples is None else min(len(dataset), int(max_examples) * 2 + 16)
    part = dataset.select(range(n)) if n < len(dataset) else dataset
    texts = part["text"]
    pairs = part["text_pair"] if "text_pair" in cols else None
    labels = part["label"] if "label" in cols else None
    if labels is not None and all(lab is None or str(lab).strip() == "" for lab in labels):
        labels = None
    return encode_corpus(tokenizer, texts, pairs, labels, max_length, max_examples)


# ---------------------------------------------------------------------------------------------
# The comparison


@dataclass
class CompareResult:
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
        }
        groups = self.groups()
        if groups:
            out["groups"] = {k: {g: lst(m) for g, m in v.items()} for k, v in groups.items()}
        if self.label_note:
            out["label_note"] = self.label_note
        return out


def _label_names(model) -> dict[int, str] | None:
    cfg = getattr(model, "config", None)
    id2label = getattr(cfg, "id2label", None) or {}
    return {int(k): str(v) for k, v in id2label.items()} if id2label else None


def batched_head_cosine(before: LoadedModel, after: LoadedModel,
                        encodings: Sequence[Encoding], batch_size: int = 32) -> np.ndarray:
    """Only the per-example, per-head cosine of :func:`compare_models` ([N, L, H], the
    examples' own order), on the same length-sorted batches and masks, without the other
    measures: a quick check, and the like-for-like counterpart of a per-example loop."""
    import torch

    out = np.zeros((len(encodings), before.n_layers, before.n_heads), dtype=np.float32)
    for idx in length_sorted_batches([e.n_tokens for e in encodings], max(1, int(batch_size))):
        group = [encodings[i] for i in idx]
        _, valid, special, segments = _batch_masks(group)
        pair = BatchMasks(valid, special, segments).pair
        with torch.inference_mode():
            out_b = forward(before.model, before.tokenizer, group)
            out_a = forward(after.model, before.tokenizer, group)
            rows = torch.as_tensor(idx)
            for l in range(before.n_layers):
                out[rows, l] = _cosine(out_b.attentions[l].float() * pair,
                                       out_a.attentions[l].float() * pair).numpy()
    return out


NOOP_STATS = ("cls", "sep", "punct")  # Clark et al. statistics whose drift is measured


def compare_models(before: LoadedModel, after: LoadedModel, corpus: Corpus, batch_size: int = 32,
                   progress: Callable[[int, int], None] | None = None) -> CompareResult:
    """Run both models on the same batches and accumulate every measure (see module doc)."""
    import torch

    notices = check_compatible(before, after)
    from analysis.stats import batch_stats  # Clark et al. statistics, = example_stats per map

    encs = corpus.encodings
    n_ex, L, H = len(encs), before.n_layers, before.n_heads
    if n_ex == 0:
        raise DataError("The corpus is empty: it holds no example with text to compare on.")
    cosine = np.zeros((n_ex, L, H), dtype=np.float32)
    rsa_ex = np.full((n_ex, L + 1), np.nan, dtype=np.float64)
    feats_b = np.zeros((n_ex, L, H, 3), dtype=np.float32)
    feats_a = np.zeros((n_ex, L, H, 3), dtype=np.float32)
    noop_b: dict[str, np.ndarray] = {}
    noop_a: dict[str, np.ndarray] = {}
    cka_acc = [CKAAccumulator() for _ in range(L + 1)]
    head = hasattr(after.model, "classifier") and hasattr(getattr(after.model, "config", None),
                                                             "id2label")
    preds: list | None = [None] * n_ex if head else None
    names = _label_names(after.model) if head else None
    done = 0
    for idx in length_sorted_batches([e.n_tokens for e in encs], max(1, int(batch_size))):
        group = [encs[i] for i in idx]
        lengths, valid, special, segments = _batch_masks(group)
        with torch.inference_mode():
            out_b = forward(before.model, before.tokenizer, group, hidden_states=True)
            out_a = forward(after.model, before.tokenizer, group, hidden_states=True)
            rows = torch.as_tensor(idx)
            masks = BatchMasks(valid, special, segments)
            for l in range(L):
                am = out_b.attentions[l].float() * masks.pair
                bm = out_a.attentions[l].float() * masks.pair
                cosine[rows, l] = _cosine(am, bm).numpy()
                feats_b[rows, l] = _features(am, masks).numpy()
                feats_a[rows, l] = _features(bm, masks).numpy()
            for l in range(L + 1):
                hb, ha = out_b.hidden_states[l].float(), out_a.hidden_states[l].float()
                rsa_ex[rows, l] = batch_rsa(hb, ha, valid).numpy()
                cka_acc[l].update(hb[valid], ha[valid])
            for store, out in ((noop_b, out_b), (noop_a, out_a)):
                # {name: [B, L, H]}: the no-op statistics shown (cls, sep, punct)
                stats = batch_stats(out.attentions, group, metrics=NOOP_STATS)
                for k, v in stats.items():
                    store[k] = store.get(k, 0.0) + np.asarray(v, dtype=np.float64).sum(0)
            if head:
                pred = out_a.logits.argmax(-1).tolist()
                for i, p in zip(idx, pred):
                    preds[i] = names.get(p, str(p)) if names else p
        done += len(idx)
        if progress is not None:
            progress(done, n_ex)
    noop_b = {k: v / n_ex for k, v in noop_b.items()}
    noop_a = {k: v / n_ex for k, v in noop_a.items()}
    label_note = ""
    labels = corpus.labels
    if labels is not None and not head:
        label_note = ("The after-model has no classification head, so correct vs wrong "
                      "predictions cannot be told apart; the split is by gold label only.")
        preds = None
    elif labels is not None and head and names:
        gold = {str(x) for x in labels}
        by_id = {str(v): str(k) for k, v in names.items()}
        if not (gold & set(names.values())) and gold <= {str(k) for k in names}:
            preds = [by_id.get(str(p), str(p)) for p in preds]  # the data holds label ids
        elif not (gold & set(names.values())):
            label_note = (f"The after-model's labels ({', '.join(sorted(set(names.values())))}) "
                          "do not match the data's labels, so correct vs wrong cannot be shown.")
            preds = None
    elif labels is None:
        label_note = "The data has no label column, so no split by label or by prediction."
        preds = None
    if corpus.skipped:
        notices.append(f"{corpus.skipped} empty example(s) were skipped.")
    if corpus.truncated:
        notices.append(f"{corpus.truncated} example(s) were truncated to {before.max_length} "
                       "tokens.")
    return CompareResult(
        before=before.spec, after=after.spec, n_layers=L, n_heads=H, texts=corpus.texts,
        pairs=corpus.pairs, rows=corpus.rows,
        n_tokens=np.array([e.n_tokens for e in encs]), cosine_examples=cosine,
        rsa_examples=rsa_ex, cka=np.array([acc.value() for acc in cka_acc]),
        noop_before=noop_b, noop_after=noop_a, features_before=feats_b, features_after=feats_a,
        identical=identical_weights(before, after), labels=labels, predictions=preds,
        label_note=label_note, notices=notices,
    )


def load_pair(before_spec: str, after_spec: str,
              loader: Callable[[str], LoadedModel] = load_model) -> tuple[LoadedModel, LoadedModel]:
    """Load both checkpoints (the after one with its classification head if any) and check that
    they can be compared. ``loader`` loads a plain encoder (the UI passes its cached loader)."""
    from analysis.models import ModelLoadError

    try:
        before = loader(normalise_spec(before_spec))
    except ModelLoadError as exc:
        raise ModelLoadError(f"Before model: {exc}") from exc
    try:
        after = load_after(normalise_spec(after_spec), loader)
    except ModelLoadError as exc:
        raise ModelLoadError(f"After model: {exc}") from exc
    check_compatible(before, after)
    return before, after


def example_maps(before: LoadedModel, after: LoadedModel, text: str, pair: str | None = None):
    """(encoding, maps_before [L,H,n,n], maps_after) of one example, both on the same tokens."""
    from analysis.attention import stack_attentions

    enc = encode(before.tokenizer, text, pair, max_length=before.max_length)
    out_b = forward(before.model, before.tokenizer, [enc])
    out_a = forward(after.model, before.tokenizer, [enc])
    return (enc, stack_attentions(out_b, 0, enc.n_tokens),
            stack_attentions(out_a, 0, enc.n_tokens))


def gallery(result: CompareResult, which: str, pattern: str,
            thresholds: PatternThresholds | None = None, k: int = 6,
            seed: int = 0) -> list[tuple[int, int, int]]:
    """Up to k (example, layer, head) triples whose map (``which`` = before/after) has
    ``pattern``; drawn at random (fixed seed) so the gallery is not just the first heads."""
    if pattern not in PATTERN_TYPES:
        raise InputError(f"Unknown pattern type {pattern!r}; use one of {', '.join(PATTERN_TYPES)}.")
    feats = result.features_before if which == "before" else result.features_after
    types = classify_patterns(feats, thresholds)
    hits = np.argwhere(types == PATTERN_TYPES.index(pattern))
    if not len(hits):
        return []
    rng = np.random.default_rng(seed)
    pick = rng.choice(len(hits), size=min(k, len(hits)), replace=False)
    return [tuple(int(x) for x in hits[i]) for i in sorted(pick)]


def read_labels(source, dataset, *, fmt: str | None = None, text_column: str = "text",
                label_column: str = "label", name: str | None = None) -> tuple[list | None, str]:
    """Gold labels for the rows of ``dataset`` (read by ``analysis.data.read_corpus`` from the
    same .jsonl/.csv ``source``) from its ``label_column``, or (None, why not).

    Rows are matched by text in file order (blank texts are skipped as the reader skips them);
    if the texts do not line up the labels are not used."""
    import csv
    import io
    import json
    from pathlib import Path

    from analysis.data import detect_format

    label_name = name or (str(source) if isinstance(source, (str, Path)) else
                          getattr(source, "name", None))
    kind = detect_format(label_name, fmt)
    if kind not in ("jsonl", "csv"):
        return None, ""
    if isinstance(source, (str, Path)):
        data = Path(source).read_bytes()
    elif isinstance(source, (bytes, bytearray)):
        data = bytes(source)
    else:
        data = source.getvalue() if hasattr(source, "getvalue") else source.read()
    text = data.decode("utf-8", errors="replace")
    rows = []
    if kind == "jsonl":
        for line in text.splitlines():
            if line.strip():
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError:
                    return None, ""
                if isinstance(obj, dict):
                    rows.append((obj.get(text_column), obj.get(label_column, None)))
    else:
        try:
            dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t")
        except csv.Error:
            dialect = csv.excel
        reader = csv.DictReader(io.StringIO(text, newline=""), dialect=dialect)
        if label_column not in (reader.fieldnames or []):
            return None, f"The data has no {label_column!r} column, so no split by label."
        rows = [(r.get(text_column), r.get(label_column)) for r in reader]
    rows = [(t, lab) for t, lab in rows if isinstance(t, str) and t.strip()]
    if not any(lab is not None and str(lab).strip() for _, lab in rows):
        return None, f"The data has no {label_column!r} column, so no split by label."
    texts = dataset["text"]
    if len(rows) < len(texts) or any(
            (t or "").strip() != (r or "").strip() for (r, _), t in zip(rows, texts)):
        return None, "The labels could not be matched to the examples, so no split by label."
    return [None if lab is None else str(lab).strip() for _, lab in rows[: len(texts)]], ""
