"""Corpus statistics per attention head (Clark et al. 2019, token level; DESIGN.md section 3).

For one example with n tokens and a map ``A[l, h, i, j]`` (row i sums to 1), with ``S`` a 0/1
selector on keys:

- ``cls`` / ``sep`` / ``punct``: ``(1/n) sum_i sum_j A[i,j] S[j]`` with S = [CLS], every [SEP],
  punctuation tokens ("." and "," by default);
- ``self`` = ``(1/n) sum_i A[i,i]``, ``prev`` = ``(1/n) sum_i A[i,i-1]``,
  ``next`` = ``(1/n) sum_i A[i,i+1]``;
- ``entropy`` = ``(1/n) sum_i -sum_j A[i,j] log A[i,j]`` (nats, 0 log 0 = 0); ``entropy_cls`` is
  row 0 ([CLS]) only.

Corpus values are the mean over examples. The reference for entropy is uniform attention over
the example's tokens, whose entropy is ``log n`` (mean over examples).

:func:`example_stats` is the plain numpy definition for one map. :func:`corpus_stats` streams
a corpus: length-sorted padded batches, statistics computed on the whole batch at once with
torch under row/column masks, sums accumulated per batch, no map kept. It gives the same numbers
as :func:`example_stats` example by example (tested).

Beyond the paper:

- *attention norms* (Kobayashi et al. 2020): ``||A[i,j] f(x_j)||`` with ``f`` the head's value
  projection followed by its slice of the attention output projection, captured by a forward
  hook on the model's value projection (no patched copy). Per row the norms are turned into
  shares (``A[i,j] ||f(x_j)|| / sum_k A[i,k] ||f(x_k)||``) so they compare with the weights:
  ``norm_cls``, ``norm_sep``, ``norm_punct``.
- *gradient importance* (Clark et al. fig. 3): :func:`gradient_importance` (mean ``|dL/dA|``
  per key category) with the model's own loss, see :func:`loss_head`.
"""

from __future__ import annotations

import re
import time
import zlib
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from analysis.errors import DataError
from analysis.models import this_thread_only

PUNCT = (".", ",")
WEIGHT_METRICS = ("cls", "sep", "punct", "self", "prev", "next", "entropy", "entropy_cls")
NORM_METRICS = ("norm_cls", "norm_sep", "norm_punct")
CLI_METRICS = ("cls", "sep", "punct", "self", "prev", "next", "entropy")
CATEGORIES = ("sep", "cls", "punct", "other")

LABELS = {
    "cls": "attention to [CLS]",
    "sep": "attention to [SEP]",
    "punct": "attention to . and ,",
    "self": "attention to the token itself",
    "prev": "attention to the previous token",
    "next": "attention to the next token",
    "entropy": "attention entropy (nats)",
    "entropy_cls": "entropy of [CLS]'s attention (nats)",
    "norm_cls": "norm share to [CLS]",
    "norm_sep": "norm share to [SEP]",
    "norm_punct": "norm share to . and ,",
}


# ---------------------------------------------------------------------------------------------
# Key selectors


def selectors(encoding, punct: Sequence[str] = PUNCT) -> dict[str, np.ndarray]:
    """Boolean masks over an example's tokens: ``cls`` (the leading special token), ``sep``
    (every special token equal to the final one: all [SEP]s, RoBERTa's </s>s), ``punct``
    (non-special tokens whose text is one of ``punct``), ``other`` (everything else)."""
    tokens = np.asarray(encoding.tokens, dtype=object)
    special = np.asarray(encoding.special, dtype=bool)
    n = len(tokens)
    cls = np.zeros(n, dtype=bool)
    sep = np.zeros(n, dtype=bool)
    if n and special[0]:
        cls = special & (tokens == tokens[0])
        cls[1:] = False  # only the leading one is [CLS]
    if n and special[-1] and not (n == 1 and cls[0]):
        sep = special & (tokens == tokens[-1])
        sep &= ~cls
    pset = set(punct)
    pmask = np.array([(not s) and (t in pset) for t, s in zip(tokens, special)], dtype=bool)
    other = ~(cls | sep | pmask)
    return {"cls": cls, "sep": sep, "punct": pmask, "other": other}


# ---------------------------------------------------------------------------------------------
# One example, plain numpy (the definition)


def example_stats(attn: np.ndarray, encoding, punct: Sequence[str] = PUNCT) -> dict[str, np.ndarray]:
    """Statistics of one example's map ``attn`` [L, H, n, n] -> {name: [L, H] float64}."""
    a = np.asarray(attn, dtype=np.float64)
    if a.ndim != 4 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"attention must be [L, H, n, n], got shape {a.shape}")
    n = a.shape[-1]
    if n != len(encoding.tokens):
        raise ValueError(f"map has {n} tokens but the encoding has {len(encoding.tokens)}")
    sel = selectors(encoding, punct)
    col = a.sum(axis=2)  # [L, H, n]: sum over queries i of A[i, j]
    out = {name: (col * sel[name]).sum(-1) / n for name in ("cls", "sep", "punct")}
    out["self"] = np.trace(a, axis1=2, axis2=3) / n
    out["prev"] = np.diagonal(a, offset=-1, axis1=2, axis2=3).sum(-1) / n
    out["next"] = np.diagonal(a, offset=1, axis1=2, axis2=3).sum(-1) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(a > 0, a * np.log(np.where(a > 0, a, 1.0)), 0.0)
    ent_rows = -plogp.sum(-1)  # [L, H, n]
    out["entropy"] = ent_rows.mean(-1)
    out["entropy_cls"] = ent_rows[..., 0]
    return out


def example_norm_stats(attn: np.ndarray, fnorm: np.ndarray, encoding,
                       punct: Sequence[str] = PUNCT) -> dict[str, np.ndarray]:
    """Kobayashi norm shares for one example: ``attn`` [L,H,n,n], ``fnorm`` [L,H,n] =
    ||f(x_j)|| per layer, head and key token."""
    a = np.asarray(attn, dtype=np.float64)
    w = a * np.asarray(fnorm, dtype=np.float64)[:, :, None, :]  # ||A[i,j] f(x_j)||
    tot = w.sum(-1, keepdims=True)
    share = np.divide(w, tot, out=np.zeros_like(w), where=tot > 0)
    n = a.shape[-1]
    sel = selectors(encoding, punct)
    col = share.sum(axis=2)
    return {f"norm_{k}": (col * sel[k]).sum(-1) / n for k in ("cls", "sep", "punct")}


# ---------------------------------------------------------------------------------------------
# Value-projection norms, captured with forward hooks


_VALUE_PATTERNS = (
    # (value projection, attention output projection) relative names per layer index
    (re.compile(r"^(.*\.)?layer\.(\d+)\.attention\.self\.value$"), "attention.self.value",
     "attention.output.dense"),
    (re.compile(r"^(.*\.)?layer\.(\d+)\.attention\.v_lin$"), "attention.v_lin",
     "attention.out_lin"),
)


def value_modules(model, n_layers: int):
    """[(value Linear, output Linear)] per layer for BERT/RoBERTa/ELECTRA-style and
    DistilBERT-style encoders, or None when the layout is unknown."""
    mods = dict(model.named_modules())
    for pattern, vname, oname in _VALUE_PATTERNS:
        found = {}
        for name in mods:
            m = pattern.match(name)
            if m:
                prefix = name[: -len(vname)]
                found[int(m.group(2))] = (mods[name], mods.get(prefix + oname))
        if len(found) == n_layers and all(o is not None for _, o in found.values()):
            return [found[i] for i in range(n_layers)]
    return None


class ValueNormHooks:
    """Forward hooks on each layer's value projection; ``fnorms(n_heads)`` then returns, per
    layer, ||f_h(x_j)|| [B, H, N] with f_h(x) = (x W_V + b_V)_h W_O^h (the head's slice of the
    attention output projection, bias excluded as in Kobayashi et al. 2020)."""

    def __init__(self, pairs):
        self.pairs = pairs
        self.values: list = [None] * len(pairs)
        self.handles = []

    def __enter__(self):
        for k, (vmod, _) in enumerate(self.pairs):
            def hook(module, args, output, k=k):
                self.values[k] = output.detach()
            self.handles.append(vmod.register_forward_hook(this_thread_only(hook)))
        return self

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()
        self.handles = []

    def fnorms(self, n_heads: int):
        import torch

        out = []
        for (vmod, omod), v in zip(self.pairs, self.values):
            B, N, D = v.shape
            dh = D // n_heads
            vh = v.double().reshape(B, N, n_heads, dh)  # [B, N, H, dh]
            wo = omod.weight.detach().double().reshape(omod.weight.shape[0], n_heads, dh)
            # ||v W_O^h||^2 = v^T (W_O^h^T W_O^h) v: a dh x dh Gram matrix per head instead of
            # materialising f (B x H x N x D_out)
            gram = torch.einsum("ohd,ohe->hde", wo, wo)  # [H, dh, dh]
            sq = torch.einsum("bnhd,hde,bnhe->bhn", vh, gram, vh).clamp_min(0.0)
            out.append(sq.sqrt().float())  # [B, H, N]
        return out


# ---------------------------------------------------------------------------------------------
# Streaming corpus statistics


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
    punct: tuple = PUNCT
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


def _batch_selectors(encodings, N: int, punct):
    """Padded key selectors [B, N] (float) and lengths for a batch."""
    B = len(encodings)
    sel = {k: np.zeros((B, N), dtype=np.float32) for k in ("cls", "sep", "punct")}
    lengths = np.zeros(B, dtype=np.int64)
    for b, enc in enumerate(encodings):
        s = selectors(enc, punct)
        n = len(enc.tokens)
        lengths[b] = n
        for k in sel:
            sel[k][b, :n] = s[k]
    return sel, lengths


def batch_stats(attentions, encodings, punct=PUNCT, fnorms=None,
                metrics: Sequence[str] = WEIGHT_METRICS) -> dict[str, "np.ndarray"]:
    """Statistics of a padded batch at once: ``attentions`` is the model's tuple of L tensors
    [B, H, N, N] (post-softmax; padded keys carry 0), ``encodings`` the batch's examples.
    Returns {name: [B, L, H] float64} per example, equal to :func:`example_stats` on each
    cropped map, for the ``metrics`` asked (a subset of WEIGHT_METRICS; the rest is not
    computed). ``fnorms`` (list of [B, H, N]) adds the norm shares."""
    import torch

    N = attentions[0].shape[-1]
    sel_np, lengths = _batch_selectors(encodings, N, punct)
    sel = {k: torch.from_numpy(v) for k, v in sel_np.items()}
    n = torch.from_numpy(lengths).double()[:, None]  # [B, 1]
    pos = torch.arange(N)
    rows = (pos[None, :] < torch.from_numpy(lengths)[:, None]).float()  # [B, N] real queries
    rows_h = rows[:, None, :]  # [B, 1, N]
    unknown = set(metrics) - set(WEIGHT_METRICS)
    if unknown:
        raise ValueError(f"Unknown statistics {sorted(unknown)}: use {WEIGHT_METRICS}.")
    want = set(metrics)
    names = [m for m in WEIGHT_METRICS if m in want] + (
        list(NORM_METRICS) if fnorms is not None else [])
    out = {k: [] for k in names}
    for li, a in enumerate(attentions):
        a = a.float()
        keys = [k for k in ("cls", "sep", "punct") if k in want]
        if keys:
            col = torch.einsum("bhij,bi->bhj", a, rows)  # [B, H, N]
            for k in keys:
                out[k].append((col * sel[k][:, None, :]).sum(-1).double() / n)
        if "self" in want:
            diag = torch.diagonal(a, dim1=-2, dim2=-1)  # [B, H, N]
            out["self"].append((diag * rows_h).sum(-1).double() / n)
        if "prev" in want:
            below = torch.diagonal(a, offset=-1, dim1=-2, dim2=-1)  # A[i, i-1], i = 1..N-1
            out["prev"].append((below * rows_h[..., 1:]).sum(-1).double() / n)
        if "next" in want:
            above = torch.diagonal(a, offset=1, dim1=-2, dim2=-1)  # A[i, i+1], i = 0..N-2
            out["next"].append((above * rows_h[..., 1:]).sum(-1).double() / n)
        if want & {"entropy", "entropy_cls"}:
            ent = -torch.xlogy(a, a).sum(-1)  # [B, H, N] row entropies (0 log 0 = 0)
            if "entropy" in want:
                out["entropy"].append((ent * rows_h).sum(-1).double() / n)
            if "entropy_cls" in want:
                out["entropy_cls"].append(ent[..., 0].double())
        if fnorms is not None:
            w = a * fnorms[li][:, :, None, :].float()
            tot = w.sum(-1, keepdim=True)
            share = torch.where(tot > 0, w / torch.where(tot > 0, tot, 1.0), 0.0)
            scol = torch.einsum("bhij,bi->bhj", share, rows)
            for k in ("cls", "sep", "punct"):
                out[f"norm_{k}"].append((scol * sel[k][:, None, :]).sum(-1).double() / n)
    return {k: torch.stack(v, dim=1).numpy() for k, v in out.items()}  # [B, L, H]


def _examples(dataset, max_examples):
    texts = dataset["text"]
    pairs = dataset["text_pair"] if "text_pair" in dataset.column_names else [None] * len(texts)
    if max_examples is not None:
        texts, pairs = texts[: int(max_examples)], pairs[: int(max_examples)]
    return list(texts), list(pairs)


def encode_corpus(loaded, dataset, max_examples=None):
    """Encode every example (truncated to the model's maximum); rows that cannot be read by the
    model (no real tokens) are skipped and counted."""
    from analysis.attention import InputError, encode

    texts, pairs = _examples(dataset, max_examples)
    encs, skipped = [], 0
    for t, p in zip(texts, pairs):
        try:
            encs.append(encode(loaded.tokenizer, t, p, max_length=loaded.max_length))
        except InputError:
            skipped += 1
    if not encs:
        raise DataError("None of the examples has any token this model can read.")
    return encs, skipped


def budget_batches(lengths: Sequence[int], batch_size: int, per_token_pair: int,
                   max_batch_mb: float = 256.0) -> list[list[int]]:
    """Length-sorted batches (longest first) of at most ``batch_size`` examples whose padded
    attention maps (``per_token_pair`` bytes per query-key pair, all layers and heads) fit in
    ``max_batch_mb``; a single example always forms a batch."""
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    budget = max_batch_mb * 2 ** 20
    batches: list[list[int]] = []
    cur: list[int] = []
    for i in order:
        n_max = lengths[cur[0]] if cur else lengths[i]
        if cur and (len(cur) >= batch_size or (len(cur) + 1) * n_max * n_max * per_token_pair
                    > budget):
            batches.append(cur)
            cur = []
        cur.append(i)
    if cur:
        batches.append(cur)
    return batches


def corpus_stats(loaded, dataset, batch_size: int = 64, max_examples: int | None = None,
                 progress: Callable[[int, int], None] | None = None,
                 punct: Sequence[str] = PUNCT, norms: bool = True,
                 max_batch_mb: float = 256.0) -> CorpusStats:
    """Stream a corpus (a Dataset with ``text`` / ``text_pair``) through the model and return
    per-head means. Batches are length-sorted (at most ``batch_size`` examples, and no more
    than ``max_batch_mb`` of attention maps, so long inputs get smaller batches); per batch the
    statistics are computed on the padded tensors and added to running sums, so memory does not
    grow with the corpus. ``progress(done, total)`` is called after every batch."""
    import torch

    from analysis.attention import _collate

    t0 = time.perf_counter()
    encs, skipped = encode_corpus(loaded, dataset, max_examples)
    total = len(encs)
    L, H = loaded.n_layers, loaded.n_heads
    pairs = value_modules(loaded.model, L) if norms else None
    norms_note = None
    if norms and pairs is None:
        norms_note = (f"Attention norms are not available for {loaded.model_type} models "
                      "(the value/output projections were not found).")
    sums: dict[str, np.ndarray] = {}
    done = 0
    bs = max(1, int(batch_size))
    model, tok = loaded.model, loaded.tokenizer
    device = next(model.parameters()).device
    hooks = ValueNormHooks(pairs) if pairs is not None else None
    with torch.inference_mode():
        if hooks is not None:
            hooks.__enter__()
        try:
            per_pair = 4 * L * H * (3 if norms else 2)  # maps + one temporary per layer
            for idx in budget_batches([e.n_tokens for e in encs], bs, per_pair, max_batch_mb):
                group = [encs[i] for i in idx]
                batch = _collate(tok, group, device)
                out = model(**batch, output_attentions=True)
                atts = [a.cpu() for a in out.attentions]
                fn = [f.cpu() for f in hooks.fnorms(H)] if hooks is not None else None
                per = batch_stats(atts, group, punct, fn)
                for k, v in per.items():
                    s = v.sum(axis=0)
                    sums[k] = sums[k] + s if k in sums else s
                done += len(idx)
                del out, atts, fn
                if progress is not None:
                    progress(done, total)
        finally:
            if hooks is not None:
                hooks.__exit__(None, None, None)
    metrics = {k: v / total for k, v in sums.items()}
    notes = []
    if skipped:
        notes.append(f"Skipped {skipped} example(s) with no token the model can read.")
    n_trunc = sum(e.truncated for e in encs)
    if n_trunc:
        notes.append(f"{n_trunc} example(s) were longer than {loaded.max_length} tokens and "
                     "were truncated.")
    return CorpusStats(
        model=loaded.spec, n_layers=L, n_heads=H, n_examples=total, n_truncated=n_trunc,
        n_tokens=int(sum(e.n_tokens for e in encs)), metrics=metrics,
        uniform_entropy=float(np.mean([np.log(e.n_tokens) for e in encs])),
        n_pairs=int(sum(e.pair is not None for e in encs)), norms_note=norms_note,
        seconds=time.perf_counter() - t0, punct=tuple(punct), notes=notes,
    )


def corpus_stats_loop(loaded, dataset, max_examples=None, punct=PUNCT) -> dict[str, np.ndarray]:
    """The plain baseline: one forward per example, then :func:`example_stats` in numpy.
    Returns {name: [L, H]} means (used by the benchmark and the tests)."""
    from analysis.attention import forward, stack_attentions

    encs, _ = encode_corpus(loaded, dataset, max_examples)
    sums = None
    for enc in encs:
        out = forward(loaded.model, loaded.tokenizer, [enc])
        st = example_stats(stack_attentions(out, 0, enc.n_tokens), enc, punct)
        sums = st if sums is None else {k: sums[k] + st[k] for k in st}
    return {k: v / len(encs) for k, v in sums.items()}


# ---------------------------------------------------------------------------------------------
# Reading the result


def noop_heads(stats: CorpusStats, top: int = 10) -> list[dict]:
    """Heads with the most weight on [SEP] + [CLS] (1-indexed layer/head), highest first."""
    w = stats.metrics["cls"] + stats.metrics["sep"]
    rows = []
    for flat in np.argsort(-w, axis=None)[:top]:
        l, h = np.unravel_index(flat, w.shape)
        row = {"layer": int(l) + 1, "head": int(h) + 1,
               "to [CLS]": float(stats.metrics["cls"][l, h]),
               "to [SEP]": float(stats.metrics["sep"][l, h]),
               "to [CLS]+[SEP]": float(w[l, h])}
        if "norm_sep" in stats.metrics:
            row["norm share [CLS]+[SEP]"] = float(stats.metrics["norm_cls"][l, h]
                                                  + stats.metrics["norm_sep"][l, h])
        rows.append(row)
    return rows


def positional_heads(stats: CorpusStats, threshold: float = 0.5) -> list[dict]:
    """Heads with more than ``threshold`` of their attention on the previous or next token."""
    rows = []
    for kind in ("prev", "next"):
        m = stats.metrics[kind]
        for l, h in zip(*np.nonzero(m > threshold)):
            rows.append({"layer": int(l) + 1, "head": int(h) + 1,
                         "direction": "previous" if kind == "prev" else "next",
                         "share": float(m[l, h])})
    rows.sort(key=lambda r: -r["share"])
    return rows


def reading(stats: CorpusStats, model_name: str | None = None) -> list[str]:
    """A few plain sentences describing the result, computed from the numbers."""
    m = stats.metrics
    name = model_name or stats.model
    L = stats.n_layers
    cls_l, sep_l, pun_l = (stats.per_layer(k) for k in ("cls", "sep", "punct"))
    out = []
    total_cls, total_sep = float(m["cls"].mean()), float(m["sep"].mean())
    sink = "[CLS]" if total_cls > total_sep else "[SEP]"
    other = "[SEP]" if sink == "[CLS]" else "[CLS]"
    out.append(
        f"In {name} the main attention sink is {sink}, not {other}: averaged over all "
        f"{L * stats.n_heads} heads, {100 * max(total_cls, total_sep):.0f}% of attention goes "
        f"to {sink} and {100 * min(total_cls, total_sep):.0f}% to {other} "
        f"({stats.n_examples} examples)."
    )
    special = cls_l + sep_l
    peak = int(np.argmax(special))
    layers_half = [i + 1 for i in range(L) if special[i] > 0.5]
    if layers_half:
        span = (f"layer {layers_half[0]}" if len(layers_half) == 1
                else f"layers {', '.join(map(str, layers_half))}")
        out.append(f"In {span} more than half of all attention goes to [CLS] or [SEP]; the peak "
                   f"is layer {peak + 1} ({100 * special[peak]:.0f}%).")
    else:
        out.append(f"No layer puts more than half its attention on [CLS]/[SEP]; the most is "
                   f"layer {peak + 1} ({100 * special[peak]:.0f}%).")
    pk = int(np.argmax(pun_l))
    out.append(f"Punctuation (\".\" and \",\") receives the most attention in layer {pk + 1} "
               f"({100 * pun_l[pk]:.0f}% on average).")
    n_prev = int((m["prev"] > 0.5).sum())
    n_next = int((m["next"] > 0.5).sum())
    out.append(f"{n_prev} head(s) put more than half their attention on the previous token and "
               f"{n_next} on the next token.")
    ent_last = float(m["entropy_cls"][-1].mean())
    out.append(f"The [CLS] token's attention in the last layer has entropy {ent_last:.2f} nats on "
               f"average, against {stats.uniform_entropy:.2f} for uniform attention.")
    if "norm_sep" in m:
        w = m["cls"] + m["sep"]
        nrm = m["norm_cls"] + m["norm_sep"]
        mask = w > 0.5
        if mask.any():
            ratio = float(nrm[mask].mean() / w[mask].mean())
            out.append(
                f"In the {int(mask.sum())} head(s) with over half their weight on [CLS]/[SEP], "
                f"those tokens carry only {100 * nrm[mask].mean():.0f}% of the weighted value "
                f"norm against {100 * w[mask].mean():.0f}% of the weight (ratio {ratio:.2f}): "
                + ("much of that attention is a no-op." if ratio < 0.6 else
                   "the weight is not mostly a no-op here.")
            )
    return out


# ---------------------------------------------------------------------------------------------
# Gradient importance (Clark et al. fig. 3)


@dataclass
class LossHead:
    """The loss available for a checkpoint: kind 'mlm', 'task' or None, with a plain note."""

    kind: str | None
    model: object | None
    tokenizer: object | None
    note: str


def loss_head(spec: str) -> LossHead:
    """Find a real loss for ``spec``: the masked-LM loss when the checkpoint ships a complete LM
    head, else the task loss of a fine-tuned sequence-classification checkpoint, else none
    (the note says why). Loads a separate model instance (the shared one is never touched)."""
    from transformers import AutoModelForMaskedLM, AutoModelForSequenceClassification, AutoTokenizer

    from analysis.models import (ModelLoadError, _quiet_transformers, load_config,
                                 normalise_spec, resolve_spec)

    _quiet_transformers()
    spec = normalise_spec(spec)
    source, name = resolve_spec(spec)
    config = load_config(spec)
    archs = [a for a in (getattr(config, "architectures", None) or [])]
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=True)
    except Exception as exc:
        raise ModelLoadError(f"Could not load the tokenizer of {spec}: {str(exc)[:120]}") from exc
    mlm_note = ""
    if getattr(tokenizer, "mask_token_id", None) is not None:
        try:
            model, info = AutoModelForMaskedLM.from_pretrained(
                source, local_files_only=True, output_loading_info=True,
                attn_implementation="eager")
            prefix = getattr(model, "base_model_prefix", "")
            missing = sorted(k for k in info.get("missing_keys", [])
                             if not k.startswith(prefix + "."))
            if not missing:
                model.eval()
                return LossHead("mlm", model, tokenizer,
                                f"Loss: masked-language-model loss of {name}'s own LM head "
                                "(15% of the word pieces of each example masked, fixed seed).")
            mlm_note = (f"its checkpoint has no trained masked-LM head ({len(missing)} head "
                        f"weights missing, e.g. {missing[0]})")
        except Exception as exc:  # no MLM class for this architecture
            mlm_note = f"it has no masked-LM head ({str(exc).splitlines()[0][:100]})"
    else:
        mlm_note = "its tokenizer has no mask token"
    if any(a.endswith("ForSequenceClassification") for a in archs):
        model = AutoModelForSequenceClassification.from_pretrained(
            source, local_files_only=True, attn_implementation="eager")
        model.eval()
        labels = getattr(model.config, "id2label", {}) or {}
        return LossHead("task", model, tokenizer,
                        f"Loss: the classification loss of {name}'s fine-tuned head "
                        f"({len(labels)} labels); the corpus has no gold labels, so the target "
                        "is the model's own predicted label.")
    return LossHead(None, None, tokenizer,
                    f"Gradient importance needs a real loss, and {name} has none: {mlm_note}, and "
                    f"it is not a fine-tuned classifier (architectures: {', '.join(archs) or 'none'})."
                    " Pick a checkpoint with an LM head or a fine-tuned classification head.")


def _mask_positions(enc, rate: float, seed: int) -> np.ndarray:
    """Positions to mask for one example, fixed by its content (so batch == one by one)."""
    cand = np.flatnonzero(~np.asarray(enc.special, dtype=bool))
    key = zlib.crc32(("\x1f".join(enc.tokens)).encode("utf-8")) ^ seed
    rng = np.random.default_rng(key)
    k = max(1, int(round(rate * len(cand))))
    return np.sort(rng.choice(cand, size=min(k, len(cand)), replace=False))


@dataclass
class GradientImportance:
    kind: str
    note: str
    n_examples: int
    per_head: dict[str, np.ndarray]  # category -> [L, H] mean |dL/dA|

    def per_layer(self, cat: str) -> np.ndarray:
        return self.per_head[cat].mean(axis=1)


def gradient_importance(head: LossHead, encodings, batch_size: int = 8,
                        punct: Sequence[str] = PUNCT, mask_rate: float = 0.15, seed: int = 0,
                        progress: Callable[[int, int], None] | None = None) -> GradientImportance:
    """Mean |dL/dA[i,j]| over the cells (i, j) whose key j is [SEP], [CLS], punctuation or
    another token, per layer and head, averaged over examples. L is each example's own loss
    (summed over the batch, so every example's gradient is its own)."""
    import torch

    from analysis.attention import _collate, length_sorted_batches

    if head.kind is None:
        raise DataError(head.note)
    model, tok = head.model, head.tokenizer
    device = next(model.parameters()).device
    sums: dict[str, np.ndarray] = {}
    total = len(encodings)
    done = 0
    for idx in length_sorted_batches([e.n_tokens for e in encodings], max(1, batch_size)):
        group = [encodings[i] for i in idx]
        batch = _collate(tok, group, device)
        B, N = batch["input_ids"].shape
        if head.kind == "mlm":
            labels = torch.full((B, N), -100, dtype=torch.long)
            ids = batch["input_ids"].clone()
            for b, enc in enumerate(group):
                pos = torch.from_numpy(_mask_positions(enc, mask_rate, seed))
                labels[b, pos] = ids[b, pos]
                ids[b, pos] = tok.mask_token_id
            batch["input_ids"] = ids
        with torch.enable_grad():
            out = model(**batch, output_attentions=True)
            logits = out.logits.float()
            if head.kind == "mlm":
                ce = torch.nn.functional.cross_entropy(
                    logits.transpose(1, 2), labels.to(device), reduction="none")  # [B, N]
                m = (labels != -100).float().to(device)
                loss = ((ce * m).sum(1) / m.sum(1)).sum()
            else:
                target = logits.argmax(-1).detach()
                loss = torch.nn.functional.cross_entropy(logits, target, reduction="sum")
            grads = torch.autograd.grad(loss, out.attentions)
        g = torch.stack([x.detach().abs().float().cpu() for x in grads], dim=1)  # [B,L,H,N,N]
        for b, enc in enumerate(group):
            n = enc.n_tokens
            sel = selectors(enc, punct)
            gb = g[b, :, :, :n, :n]
            for cat in CATEGORIES:
                cols = torch.from_numpy(sel[cat])
                k = int(cols.sum())
                if k == 0:
                    continue
                val = gb[..., cols].sum(dim=(-1, -2)).double().numpy() / (n * k)  # [L, H]
                sums.setdefault(cat, [np.zeros_like(val), 0])
                sums[cat][0] += val
                sums[cat][1] += 1
        done += len(idx)
        if progress is not None:
            progress(done, total)
    per_head = {cat: s / max(c, 1) for cat, (s, c) in sums.items()}
    return GradientImportance(head.kind, head.note, total, per_head)
