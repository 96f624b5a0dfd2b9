"""Gradient importance (Clark et al. 2019, fig. 3; docs/METHODS.md section 5): how much the
loss depends on the attention to [SEP], [CLS], punctuation and other tokens.

:func:`loss_head` finds a real loss for a checkpoint (its own masked-LM head, else a fine-tuned
classification head, else none, with a note); :func:`gradient_importance` back-propagates each
example's loss to every attention weight and averages ``|dL/dA[i,j]|`` per key category:
``g_c[l,h] = (1/(n k_c)) sum_i sum_{j in c} |dL/dA[l,h,i,j]|``.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from analysis.core.batching import batches, collate
from analysis.core.errors import DataError
from analysis.core.forward import forward
from analysis.core.measures import CATEGORIES, PUNCT, selectors
from analysis.core.execution.corpus import add_arrays
from analysis.core.study import Field, Schema, StudyResult
from analysis.core.encoding import EMPTY_CORPUS, encode_dataset
from analysis.core.models import (
    ModelLoadError, _quiet_transformers, check_weights, load_config, normalise_spec, pick_device,
    resolve_spec,
)


@dataclass
class LossHead:
    """The loss available for a checkpoint: kind 'mlm', 'task' or None, with a plain note."""

    kind: str | None
    model: object | None
    tokenizer: object | None
    note: str


def _mlm_head(source: str, name: str, tokenizer) -> tuple[LossHead | None, str]:
    """The checkpoint's own masked-LM head when it is complete, else (None, why not)."""
    # lazy: imported when used: transformers (heavy)
    from transformers import AutoModelForMaskedLM

    if getattr(tokenizer, "mask_token_id", None) is None:
        return None, "its tokenizer has no mark for a hidden word"
    try:
        model, info = AutoModelForMaskedLM.from_pretrained(
            source, local_files_only=True, output_loading_info=True, attn_implementation="eager")
    except Exception:  # no MLM class for this architecture
        return None, "it has no part that guesses hidden words (a masked-language-model head)"
    prefix = getattr(model, "base_model_prefix", "")
    missing = sorted(k for k in info.get("missing_keys", []) if not k.startswith(prefix + "."))
    if missing:
        return None, ("it was saved without its part that guesses hidden words (no trained "
                      "masked-language-model head)")
    _to_device(model)
    return LossHead("mlm", model, tokenizer,
                    f"Loss: masked-language-model loss of {name}'s own LM head "
                    "(15% of the word pieces of each example masked, fixed seed)."), ""


def _to_device(model) -> None:
    """Put the loss head's model on :func:`analysis.core.models.pick_device`'s device (CUDA when
    present, as ``load_model`` does), in eval mode."""
    try:
        model.to(pick_device())
    except ValueError as exc:  # a host's bad DASHBOARD_DEVICE: one plain line
        raise ModelLoadError(str(exc)) from None
    model.eval()


def loss_head(spec: str) -> LossHead:
    """Find a real loss for ``spec``: the masked-LM loss when the checkpoint ships a complete LM
    head, else the task loss of a fine-tuned sequence-classification checkpoint, else none
    (the note says why). Loads a separate model instance (the shared one is never touched)."""
    # lazy: imported when used: transformers (heavy)
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    _quiet_transformers()
    spec = normalise_spec(spec)
    source, name = resolve_spec(spec)
    archs = list(getattr(load_config(spec), "architectures", None) or [])
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=True)
    except Exception as exc:
        raise ModelLoadError(f"Could not load the tokenizer of {spec}: {str(exc)[:120]}") from exc
    head, mlm_note = _mlm_head(source, name, tokenizer)
    if head is not None:
        return head
    if any(a.endswith("ForSequenceClassification") for a in archs):
        model, info = AutoModelForSequenceClassification.from_pretrained(
            source, local_files_only=True, attn_implementation="eager",
            output_loading_info=True, ignore_mismatched_sizes=True)
        check_weights(model, info, spec)
        _to_device(model)
        labels = getattr(model.config, "id2label", {}) or {}
        return LossHead("task", model, tokenizer,
                        f"Loss: the classification loss of {name}'s fine-tuned head "
                        f"({len(labels)} labels); the corpus has no gold labels, so the target "
                        "is the model's own predicted label.")
    return LossHead(None, None, tokenizer,
                    "Gradient importance measures how much each head matters to a task the "
                    f"model was trained for, and {name} has no such task to score: {mlm_note}, "
                    "and it was not fine-tuned to classify text. Pick a model that was, such as "
                    "the example checkpoint, or one with a trained masked-language-model head.")


def _mask_positions(enc, rate: float, seed: int) -> np.ndarray:
    """Positions to mask for one example, fixed by its content (so batch == one by one)."""
    cand = np.flatnonzero(~np.asarray(enc.special, dtype=bool))
    key = zlib.crc32(("\x1f".join(enc.tokens)).encode("utf-8")) ^ seed
    rng = np.random.default_rng(key)
    k = max(1, int(round(rate * len(cand))))
    return np.sort(rng.choice(cand, size=min(k, len(cand)), replace=False))


@dataclass
class GradientImportance(StudyResult):
    """Mean |dL/dA| per key category (:func:`gradient_importance`); its JSON is the noop
    command's ``gradient_importance``."""

    SCHEMA = Schema((
        Field("loss", "'mlm' (the checkpoint's own masked-LM loss) or 'task' (its "
                      "classification loss against its own predicted label)"),
        Field("note", "the loss in words"),
        Field("n_examples", "examples back-propagated"),
        Field("per_head", "key category (sep, cls, punct, other) -> layers x heads "
                          "(0-indexed) mean |dL/dA[i,j]| over the cells whose key j is in it"),
    ))

    kind: str
    note: str
    n_examples: int
    per_head: dict[str, np.ndarray]  # category -> [L, H] mean |dL/dA|

    def per_layer(self, cat: str) -> np.ndarray:
        return self.per_head[cat].mean(axis=1)

    def json_fields(self) -> dict:
        return {"loss": self.kind, "note": self.note, "n_examples": int(self.n_examples),
                "per_head": dict(self.per_head)}

    @classmethod
    def from_json(cls, data: dict) -> "GradientImportance":
        cls.SCHEMA.check(data)
        return cls(data["loss"], data["note"], data["n_examples"],
                   {k: np.asarray(v, dtype=float) for k, v in data["per_head"].items()})


def _masked_inputs(head: LossHead, group, mask_rate: float, seed: int):
    """Padded inputs for a batch and, for the MLM loss, the labels [B, N] (-100 where not
    masked) with the chosen positions replaced by the mask token."""
    # lazy: imported when used: torch (heavy)
    import torch

    batch = collate(head.tokenizer, group)
    if head.kind != "mlm":
        return batch, None
    B, N = batch["input_ids"].shape
    labels = torch.full((B, N), -100, dtype=torch.long)
    ids = batch["input_ids"].clone()
    for b, enc in enumerate(group):
        pos = torch.from_numpy(_mask_positions(enc, mask_rate, seed))
        labels[b, pos] = ids[b, pos]
        ids[b, pos] = head.tokenizer.mask_token_id
    batch["input_ids"] = ids
    return batch, labels


def _batch_loss(kind: str, logits, labels):
    """Sum over the batch of each example's loss: mean cross-entropy over its masked positions
    (MLM), or cross-entropy against the model's own predicted label (task)."""
    # lazy: imported when used: torch (heavy)
    import torch

    logits = logits.float()
    if kind == "mlm":
        labels = labels.to(logits.device)
        ce = torch.nn.functional.cross_entropy(logits.transpose(1, 2), labels,
                                               reduction="none")  # [B, N]
        m = (labels != -100).float()
        return ((ce * m).sum(1) / m.sum(1)).sum()
    target = logits.argmax(-1).detach()
    return torch.nn.functional.cross_entropy(logits, target, reduction="sum")


def _add_categories(sums: dict, g, group, punct) -> None:
    """Add each example's mean |dL/dA| over the cells whose key is in each category."""
    # lazy: imported when used: torch (heavy)
    import torch

    for b, enc in enumerate(group):
        n = enc.n_tokens
        sel = selectors(enc, punct)
        gb = g[b, :, :, :n, :n]
        for cat in CATEGORIES:
            cols = torch.from_numpy(sel[cat])
            k = int(cols.sum())
            if k == 0:
                continue
            val = gb[..., cols.to(gb.device)].sum(dim=(-1, -2)).double().cpu().numpy() / (n * k)
            sums.setdefault(cat, [np.zeros_like(val), 0])
            sums[cat][0] += val
            sums[cat][1] += 1


def gradient_sums(head: LossHead, encodings, batch_size: int = 8,
                  punct: Sequence[str] = PUNCT, mask_rate: float = 0.15, seed: int = 0,
                  progress: Callable[[int, int], None] | None = None) -> dict[str, list]:
    """{category: [sum over examples of the example's mean |dL/dA| [L, H], examples counted]}:
    the sums :func:`gradient_importance` divides (the partial of :class:`GradientsJob`)."""
    # lazy: imported when used: torch (heavy)
    import torch

    if head.kind is None:
        raise DataError(head.note)
    sums: dict[str, list] = {}
    total, done = len(encodings), 0
    for idx in batches([e.n_tokens for e in encodings], batch_size):
        group = [encodings[i] for i in idx]
        inputs, labels = _masked_inputs(head, group, mask_rate, seed)
        fw = forward(head.model, inputs=inputs, grad=True)
        with torch.enable_grad():
            loss = _batch_loss(head.kind, fw.output.logits, labels)
            grads = torch.autograd.grad(loss, fw.attentions)
        g = torch.stack([x.detach().abs().float().cpu() for x in grads], dim=1)  # [B,L,H,N,N]
        _add_categories(sums, g, group, punct)
        done += len(idx)
        if progress is not None:
            progress(done, total)
    return sums


def gradient_importance(head: LossHead, encodings, batch_size: int = 8,
                        punct: Sequence[str] = PUNCT, mask_rate: float = 0.15, seed: int = 0,
                        progress: Callable[[int, int], None] | None = None) -> GradientImportance:
    """Mean |dL/dA[i,j]| over the cells (i, j) whose key j is [SEP], [CLS], punctuation or
    another token, per layer and head, averaged over examples. L is each example's own loss
    (summed over the batch, so every example's gradient is its own)."""
    sums = gradient_sums(head, encodings, batch_size, punct, mask_rate, seed, progress)
    per_head = {cat: s / max(c, 1) for cat, (s, c) in sums.items()}
    return GradientImportance(head.kind, head.note, len(encodings), per_head)


@dataclass
class GradientsPartial:
    """One shard's :func:`gradient_sums`, its example count and its first row."""

    first_row: int
    kind: str
    note: str
    n_examples: int
    sums: dict  # category -> [L, H] sum
    counts: dict  # category -> examples with at least one key of the category


@dataclass
class GradientsJob:
    """:func:`gradient_importance` over a corpus (a Dataset with ``text`` / ``text_pair``) as
    map/merge (:mod:`analysis.core.execution.corpus`): per category the sum of the examples' [L, H]
    values and their count, added over shards and divided once at the end. The masked positions are
    fixed by each example's own tokens, so shards draw the same masks."""

    spec: str
    batch_size: int = 8
    max_length: int = 512
    punct: Sequence[str] = PUNCT
    mask_rate: float = 0.15
    seed: int = 0

    def load(self) -> LossHead:
        return loss_head(self.spec)

    def map(self, head: LossHead, shard, rows, progress=None) -> GradientsPartial:
        rows = list(rows)
        if head.kind is None:
            raise DataError(head.note)
        part = GradientsPartial(rows[0] if rows else 0, head.kind, head.note, 0, {}, {})
        try:
            encs = encode_dataset(head.tokenizer, shard, self.max_length).encodings
        except DataError:  # an empty shard, or none of its examples readable
            return part
        sums = gradient_sums(head, encs, self.batch_size, self.punct, self.mask_rate,
                             self.seed, progress)
        part.n_examples = len(encs)
        part.sums = {cat: s for cat, (s, _) in sums.items()}
        part.counts = {cat: c for cat, (_, c) in sums.items()}
        return part

    def merge(self, partials) -> GradientImportance:
        parts = sorted(partials, key=lambda p: p.first_row)
        total = sum(p.n_examples for p in parts)
        if not total:
            raise DataError(EMPTY_CORPUS)
        sums: dict = {}
        counts: dict = {}
        for p in parts:
            add_arrays(sums, p.sums)
            add_arrays(counts, p.counts)
        per_head = {cat: sums[cat] / max(counts[cat], 1) for cat in CATEGORIES if cat in sums}
        return GradientImportance(parts[0].kind, parts[0].note, total, per_head)
