"""Fine-tuning a copy of an encoder as a sentence-pair classifier, and its evaluation with the
paper's metrics, optionally with heads masked (docs/METHODS.md sections 6 and 7).

Every model call goes through :func:`analysis.core.forward.forward` over batches of
:func:`analysis.core.batching.batches` (shuffled and length-bucketed for training, shortest first
for inference); the given model is never modified.
"""

from __future__ import annotations

import copy
import math
import random
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from analysis.absa.tasks import LABELS, PairExample, is_binary, metrics_from_scores, \
    num_labels, pair_scores
from analysis.core.batching import batches, pad_features
from analysis.core.errors import DataError, InputError
from analysis.core.forward import forward
from analysis.core.cards import CONFIG_KEY, training_record
from analysis.core.hooks import encoder_layers

NO_DECAY = ("bias", "LayerNorm.weight", "layer_norm.weight", "LayerNorm.bias")


def make_classifier(loaded, task: str, seed: int = 0):
    """A NEW sequence classifier for ``task`` whose encoder weights are a copy of
    ``loaded.model`` (the given model is never touched)."""
    # lazy: imported when used: torch (heavy), transformers (heavy)
    import torch
    from transformers import AutoModelForSequenceClassification

    n = num_labels(task)
    src = loaded.model
    if getattr(src.config, "num_labels", None) == n and hasattr(src, "classifier"):
        return copy.deepcopy(src)
    config = copy.deepcopy(src.config)
    config.num_labels = n
    labels = ("no", "yes") if is_binary(task) else LABELS
    config.id2label = dict(enumerate(labels))
    config.label2id = {v: k for k, v in enumerate(labels)}
    config.architectures = None
    torch.manual_seed(seed)
    clf = AutoModelForSequenceClassification.from_config(config, attn_implementation="eager")
    base = getattr(clf, clf.base_model_prefix)
    src_base = getattr(src, src.base_model_prefix, src) if hasattr(src, "classifier") else src
    state = {k: v.detach().clone() for k, v in src_base.state_dict().items()}
    missing, unexpected = base.load_state_dict(state, strict=False)
    bad = [k for k in missing if not k.startswith("pooler")]
    unexpected = [k for k in unexpected if not k.startswith("pooler")]  # RoBERTa heads: none
    if bad or unexpected:
        raise InputError(f"{loaded.spec}: the encoder weights do not fit a classifier "
                         f"({len(bad)} missing, {len(unexpected)} unexpected).")
    clf.to(next(src.parameters()).device)  # the device the loaded model runs on
    clf.eval()
    return clf


def _tokenize(tokenizer, examples: Sequence[PairExample], max_length: int):
    return tokenizer([e.text_a for e in examples], [e.text_b for e in examples],
                     truncation=True, max_length=max_length)


@dataclass
class TrainProgress:
    step: int
    total_steps: int
    epoch: int
    loss: float
    examples_per_s: float


@dataclass
class FineTuneResult:
    model: object
    tokenizer: object
    losses: list[float]
    seconds: float
    seconds_per_epoch: list[float] = field(default_factory=list)
    n_examples: int = 0
    frozen_layers: int = 0  # embeddings and this many lower layers were not trained
    word_embeddings_trained: bool = True

    @property
    def record(self) -> dict:
        """What was trained (:func:`analysis.core.cards.training_record`): the card's ``trained``
        and the model config's ``dashboard_training``."""
        return training_record(self.frozen_layers, self.model.config.num_hidden_layers,
                               self.word_embeddings_trained)


def freeze_word_embeddings(model) -> int:
    """Stop training the word-embedding table (the vocabulary x hidden matrix: half of a small
    encoder's weights; a small sample meets few of its rows) and return how many weights stay
    trainable. The optimizer then updates, and clips, only the rest (docs/METHODS.md section 7)."""
    emb = model.get_input_embeddings()
    if emb is not None:
        emb.weight.requires_grad_(False)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def frozen_count(model, trained_layers: int | None) -> int:
    """How many lower encoder layers stay frozen when the top ``trained_layers`` are trained
    (0 for None or when the model has no more layers than that)."""
    if trained_layers is None:
        return 0
    if int(trained_layers) < 0:
        raise InputError("trained_layers must be 0 or more.")
    return max(0, model.config.num_hidden_layers - int(trained_layers))


def top_layers_trainable(model) -> bool:
    """Whether :func:`fine_tune` can train only the top layers of ``model`` (a BERT, RoBERTa or
    ELECTRA layout: ``encoder.layer``; DistilBERT's and ALBERT's layouts are not)."""
    base = getattr(model, getattr(model, "base_model_prefix", ""), model)
    return hasattr(getattr(base, "encoder", None), "layer") and hasattr(base, "embeddings")


def freeze_lower_layers(model, k: int) -> int:
    """Stop training the embeddings and the lowest ``k`` encoder layers (Lee et al. 2019,
    "What would Elsa do? Freezing layers during transformer fine-tuning"); return how many
    weights stay trainable. ``k == 0`` freezes nothing."""
    if k:
        layers = encoder_layers(model)
        if not 0 < k <= len(layers):
            raise InputError(f"frozen_layers must be from 0 to {len(layers)}.")
        for module in [getattr(model, model.base_model_prefix).embeddings, *layers[:k]]:
            module.requires_grad_(False)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def lower_layer_outputs(model, tokenizer, features: dict, k: int, batch_size: int = 64) -> list:
    """Each example's input of encoder layer ``k`` (= output of the ``k`` frozen layers below
    it, in eval mode: no dropout) [n_i, D], cropped to its own tokens: computed once, so that
    each training step runs only the layers from ``k`` on
    (:func:`analysis.core.hooks.start_at_layer`)."""
    n = len(features["input_ids"])
    lengths = [len(x) for x in features["input_ids"]]
    out: list = [None] * n
    was_training = model.training
    model.eval()
    for idx in batches(lengths, batch_size):
        hidden = forward(model, inputs=pad_features(tokenizer, features, idx), attentions=False,
                         hidden_states=True).output.hidden_states[k]
        for b, i in enumerate(idx):
            out[i] = hidden[b, :lengths[i]].clone()
    model.train(was_training)
    return out


def _padded(rows: list, n: int):
    """[B, n, D] of the rows [n_i, D], zero-padded (the attention mask hides the padding)."""
    # lazy: imported when used: torch (heavy)
    import torch

    batch = torch.zeros(len(rows), n, rows[0].shape[-1], dtype=rows[0].dtype)
    for b, row in enumerate(rows):
        batch[b, :row.shape[0]] = row
    return batch


def _optimizer(model, lr: float):
    """AdamW over the trainable weights, weight decay 0.01 except on biases and LayerNorm
    weights; the fused implementation (one kernel over all weights: the same update, about a
    quarter of the for-loop's time a step on a CPU) where torch has it for the device, else the
    multi-tensor (foreach) one."""
    # lazy: imported when used: torch (heavy)
    import torch

    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    groups = [
        {"params": [p for n, p in named if not any(k in n for k in NO_DECAY)],
         "weight_decay": 0.01},
        {"params": [p for n, p in named if any(k in n for k in NO_DECAY)], "weight_decay": 0.0},
    ]
    try:
        return torch.optim.AdamW(groups, lr=lr, fused=True)
    except (RuntimeError, TypeError, ValueError):  # a device or dtype without the fused kernel
        return torch.optim.AdamW(groups, lr=lr, foreach=True)


def training_forward(model, tokenizer, enc: dict, labels, idx, cached=None, frozen: int = 0):
    """One training step's forward (with gradients, no attentions) on the examples ``idx`` of
    the tokenised ``enc``: from the embeddings, or, with ``cached`` (the lower layers' outputs,
    :func:`lower_layer_outputs`), from layer ``frozen`` on. Returns the model's output."""
    inputs = pad_features(tokenizer, enc, idx)
    start = {} if cached is None else {"start_layer": frozen, "layer_inputs": _padded(
        [cached[i] for i in idx], inputs["input_ids"].shape[1])}
    return forward(model, inputs=inputs, labels=labels[idx], grad=True, attentions=False,
                   **start).output


def fine_tune(loaded, examples: Sequence[PairExample], task: str, epochs: float = 4,
              lr: float = 2e-5, warmup: float = 0.1, batch_size: int = 24, max_length: int = 128,
              seed: int = 0, max_steps: int | None = None,
              progress: Callable[[TrainProgress], None] | None = None,
              should_stop: Callable[[], bool] | None = None,
              time_budget_s: float | None = None,
              epoch_end: Callable[[int, object], None] | None = None,
              train_word_embeddings: bool = True,
              trained_layers: int | None = None) -> FineTuneResult:
    """Fine-tune a copy of ``loaded.model`` as a pair classifier for ``task``.

    AdamW (weight decay 0.01, none on biases and LayerNorm), linear warmup over ``warmup``
    of the steps then linear decay, length-bucketed shuffled batches. ``epochs`` may be
    fractional; ``max_steps`` caps the steps. ``progress`` is called after every step.
    ``time_budget_s``: every 25 steps the planned number of steps is lowered to what fits in
    the remaining time at the measured speed, and the warmup/decay schedule follows the new
    plan, so training ends on time with the learning rate decayed to zero. ``epoch_end(k,
    model)`` is called after each full pass k (1-based; not after a pass cut short) with
    the model in eval mode (training resumes afterwards): a learning curve on held-out data.
    With ``train_word_embeddings=False`` the word-embedding table stays as the base model's
    (:func:`freeze_word_embeddings`: fewer seconds a step; bench/studies/absa_example.py
    ``--freeze-embeddings`` measures what it does to the example's held-out metrics). With
    ``trained_layers=t`` only the top t encoder layers (and the pooler and classifier) are
    trained: the embeddings and the k = L - t layers below stay the base model's
    (:func:`freeze_lower_layers`; none when t >= L) and their outputs are computed once
    (:func:`lower_layer_outputs`), so each step runs layers k.. only (docs/METHODS.md
    section 7). None trains every layer."""
    # lazy: imported when used: torch (heavy)
    import torch
    if not examples:
        raise DataError("No training examples.")
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    model = make_classifier(loaded, task, seed)
    if not train_word_embeddings:
        freeze_word_embeddings(model)
    frozen_layers = frozen_count(model, trained_layers)
    freeze_lower_layers(model, frozen_layers)
    trainable = [p for p in model.parameters() if p.requires_grad]
    tok = loaded.tokenizer
    enc = _tokenize(tok, examples, max_length)
    cached = lower_layer_outputs(model, tok, enc, frozen_layers) if frozen_layers else None
    labels = torch.tensor([e.label for e in examples], dtype=torch.long)
    lengths = [len(x) for x in enc["input_ids"]]
    rng = random.Random(seed)
    steps_per_epoch = math.ceil(len(examples) / batch_size)
    total = max(1, int(math.ceil(steps_per_epoch * epochs)))
    if max_steps:
        total = min(total, int(max_steps))
    opt = _optimizer(model, lr)
    plan = {"total": total}

    def lr_factor(k: int) -> float:
        """Linear warmup over ``warmup`` of the planned steps, then linear decay to 0."""
        n = plan["total"]
        w = int(warmup * n)
        if k < w:
            return k / max(1, w)
        return max(0.0, (n - k) / max(1, n - w))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_factor)
    model.train()
    losses, per_epoch = [], []
    t0 = time.perf_counter()
    step, epoch, seen = 0, 0, 0
    while step < plan["total"]:
        te = time.perf_counter()
        full_pass = True
        for idx in batches(lengths, batch_size, rng=rng):
            if step >= plan["total"] or (should_stop and should_stop()):
                full_pass = False
                break
            out = training_forward(model, tok, enc, labels, idx, cached, frozen_layers)
            out.loss.backward()
            torch.nn.utils.clip_grad_norm_(trainable, 1.0, foreach=True)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
            step += 1
            seen += len(idx)
            losses.append(float(out.loss.detach()))
            el = time.perf_counter() - t0
            if time_budget_s and step % 25 == 0:
                fit = step + int(max(0.0, time_budget_s - el) / (el / step))
                plan["total"] = max(step + 1, min(plan["total"], fit))
            if progress:
                progress(TrainProgress(step, plan["total"], epoch, losses[-1],
                                       seen / el if el else 0.0))
        per_epoch.append(time.perf_counter() - te)
        epoch += 1
        if epoch_end and full_pass:
            tc = time.perf_counter()
            model.eval()
            epoch_end(epoch, model)
            model.train()
            t0 += time.perf_counter() - tc  # the callback's time is not training time
        if should_stop and should_stop():
            break
    for p in model.parameters():  # a fine-tuned model is a plain model again
        p.requires_grad_(True)
    model.eval()
    result = FineTuneResult(model, tok, losses, time.perf_counter() - t0, per_epoch,
                            len(examples), frozen_layers, bool(train_word_embeddings))
    setattr(model.config, CONFIG_KEY, result.record)  # saved with the weights (config.json)
    return result


def predict_probs(model, tokenizer, examples: Sequence[PairExample], batch_size: int = 64,
                  max_length: int = 128, head_mask: np.ndarray | None = None,
                  progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """Softmax probabilities [n, num_labels] for the pairs (optionally with heads masked:
    ``head_mask[l, h] == 0`` zeroes head h of layer l)."""
    # lazy: imported when used: torch (heavy)
    import torch

    enc = _tokenize(tokenizer, examples, max_length)
    lengths = [len(x) for x in enc["input_ids"]]
    out = np.zeros((len(examples), model.config.num_labels), dtype=np.float64)
    model.eval()
    done = 0
    for idx in batches(lengths, batch_size, ascending=True):
        logits = forward(model, inputs=pad_features(tokenizer, enc, idx), attentions=False,
                         head_mask=head_mask).output.logits
        out[idx] = torch.softmax(logits.float(), -1).cpu().numpy()
        done += len(idx)
        if progress:
            progress(done, len(examples))
    return out


def evaluate(model, tokenizer, examples: Sequence[PairExample], task: str,
             head_mask: np.ndarray | None = None, max_length: int = 128,
             progress: Callable[[int, int], None] | None = None) -> dict:
    """The paper's metrics (percent) of ``model`` on ``examples``."""
    probs = predict_probs(model, tokenizer, examples, head_mask=head_mask,
                          max_length=max_length, progress=progress)
    gold, scores = pair_scores(examples, probs, task)
    return metrics_from_scores(gold, scores)
