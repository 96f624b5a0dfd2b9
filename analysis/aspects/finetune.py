"""Aspect-based sentiment as sentence pairs (Sun et al. 2019, repository HSLCY/ABSA-BERT-pair).

Every (review, category) becomes one pair with an auxiliary sentence (DESIGN.md section 4):

=======  ==================================================  ===================  ============
task     auxiliary sentence                                  label                pair order
=======  ==================================================  ===================  ============
qa_m     ``what do you think of the {aspect} of it ?``       5-way                (review, aux)
nli_m    ``{aspect}``                                        5-way                (review, aux)
qa_b     ``the polarity of the aspect {aspect} is {label} .``  yes/no, 5 rows     (aux, review)
nli_b    ``{label} - {aspect}``                              yes/no, 5 rows       (aux, review)
=======  ==================================================  ===================  ============

Aspects (in this order): price, anecdotes, food, ambience, service. Labels: positive, neutral,
negative, conflict, none. Fine-tuning (AdamW, lr 2e-5, warmup 0.1, length-bucketed batches)
always trains a *copy* of the given model; checkpoints are written atomically (temporary folder,
then rename) as safetensors + tokenizer + ``absa_card.json``. Metrics follow the paper's
evaluation code: aspect micro P/R/F1 and 4-way / 3-way / binary sentiment accuracy (percent).
"""

from __future__ import annotations

import contextlib
import copy
import json
import math
import os
import random
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from analysis.absa_data import CATEGORIES
from analysis.attention import InputError
from analysis.errors import DataError
from analysis.models import this_thread_only

TASKS = ("qa_m", "nli_m", "qa_b", "nli_b")
TASK_NAMES = {"qa_m": "QA-M", "nli_m": "NLI-M", "qa_b": "QA-B", "nli_b": "NLI-B"}
# The word used for each category in the auxiliary sentence (paper's data generator).
ASPECT_WORDS = {"price": "price", "anecdotes/miscellaneous": "anecdotes", "food": "food",
                "ambience": "ambience", "service": "service"}
LABELS = ("positive", "neutral", "negative", "conflict", "none")
NONE = LABELS.index("none")
CARD_NAME = "absa_card.json"
PAIR_ORDERS = ("review-aux", "aux-review")


def default_pair_order(task: str) -> str:
    """The paper's order: review first for the M tasks, auxiliary sentence first for B."""
    check_task(task)
    return "review-aux" if task.endswith("_m") else "aux-review"


def check_task(task: str) -> str:
    if task not in TASKS:
        raise InputError(f"Unknown task {task!r}; choose one of {', '.join(TASKS)}.")
    return task


def is_binary(task: str) -> bool:
    return check_task(task).endswith("_b")


def num_labels(task: str) -> int:
    return 2 if is_binary(task) else len(LABELS)


def auxiliary_sentence(task: str, category: str, label: str | None = None) -> str:
    """The auxiliary sentence for a category (and, for the B tasks, a candidate label)."""
    check_task(task)
    aspect = ASPECT_WORDS.get(category)
    if aspect is None:
        raise DataError(f"Unknown category {category!r}.")
    if task == "qa_m":
        return f"what do you think of the {aspect} of it ?"
    if task == "nli_m":
        return aspect
    if label not in LABELS:
        raise InputError(f"The {TASK_NAMES[task]} task needs one of the labels {LABELS}.")
    if task == "qa_b":
        return f"the polarity of the aspect {aspect} is {label} ."
    return f"{label} - {aspect}"


@dataclass
class PairExample:
    """One classifier input. ``sentence`` indexes the dataset row, ``category`` the aspect,
    ``row`` the candidate label (B tasks) or -1."""

    text_a: str
    text_b: str
    label: int
    sentence: int
    category: str
    gold: str
    row: int = -1
    aux_first: bool = False

    @property
    def review(self) -> str:
        return self.text_b if self.aux_first else self.text_a

    @property
    def aux(self) -> str:
        return self.text_a if self.aux_first else self.text_b


def gold_polarities(row: dict) -> dict[str, str]:
    """Category -> gold label for one sentence (``none`` for categories it does not mention)."""
    gold = {c: "none" for c in CATEGORIES}
    for c in row["categories"]:
        gold[c["category"]] = c["polarity"]
    return gold


def build_examples(ds, task: str, pair_order: str | None = None) -> list[PairExample]:
    """Dataset rows -> classifier pairs: 5 per sentence (M tasks) or 25 (B tasks)."""
    pair_order = pair_order or default_pair_order(task)
    if pair_order not in PAIR_ORDERS:
        raise InputError(f"Unknown pair order {pair_order!r}; choose {' or '.join(PAIR_ORDERS)}.")
    if not any(len(r["categories"]) for r in ds):
        raise DataError("The data has no sentence-level category polarities (ASTE files have "
                        "none); use SemEval-14/16 XML or the bundled sample for fine-tuning.")
    aux_first = pair_order == "aux-review"
    out = []
    for i, row in enumerate(ds):
        gold = gold_polarities(row)
        for cat in CATEGORIES:
            rows = [(None, -1)] if not is_binary(task) else [(lab, k) for k, lab in enumerate(LABELS)]
            for lab, k in rows:
                aux = auxiliary_sentence(task, cat, lab)
                label = LABELS.index(gold[cat]) if k < 0 else int(lab == gold[cat])
                a, b = (aux, row["text"]) if aux_first else (row["text"], aux)
                out.append(PairExample(a, b, label, i, cat, gold[cat], k, aux_first))
    return out


# ---------------------------------------------------------------------------------------------
# Metrics (HSLCY/ABSA-BERT-pair evaluation.py, semeval_PRF and semeval_Acc)


def aspect_prf(y_true: Sequence[int], y_pred: Sequence[int]) -> tuple[float, float, float]:
    """Aspect detection micro P/R/F1 (percent). Inputs are 5 consecutive labels per sentence
    (in CATEGORIES order); sentences without any gold aspect are skipped, as in the paper."""
    y_true, y_pred = list(y_true), list(y_pred)
    if len(y_true) != len(y_pred) or len(y_true) % 5:
        raise ValueError("aspect_prf needs 5 labels per sentence for truth and prediction.")
    s_all = g_all = sg_all = 0
    for i in range(0, len(y_true), 5):
        s = {j for j in range(5) if y_pred[i + j] != NONE}
        g = {j for j in range(5) if y_true[i + j] != NONE}
        if not g:
            continue
        s_all += len(s)
        g_all += len(g)
        sg_all += len(s & g)
    p = sg_all / s_all if s_all else 0.0
    r = sg_all / g_all if g_all else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return 100 * p, 100 * r, 100 * f


def sentiment_accuracy(y_true: Sequence[int], y_pred: Sequence[int], scores: np.ndarray,
                       classes: int) -> float:
    """Sentiment accuracy (percent) over gold != none: 4-way (a predicted none becomes the
    argmax of the 4 polarities), 3-way (gold in pos/neu/neg; argmax over those three) or
    binary (gold in pos/neg; the larger of the two)."""
    scores = np.asarray(scores, dtype=np.float64)
    total = right = 0
    for t, p, sc in zip(y_true, y_pred, scores):
        if classes == 4:
            if t == NONE:
                continue
            if p == NONE:
                p = int(np.argmax(sc[:4]))
        elif classes == 3:
            if t >= 3:
                continue
            if p >= 3:
                p = int(np.argmax(sc[:3]))
        elif classes == 2:
            if t >= 3 or t == 1:
                continue
            if p >= 3 or p == 1:
                p = 0 if sc[0] >= sc[2] else 2
        else:
            raise ValueError("classes must be 4, 3 or 2")
        total += 1
        right += int(p == t)
    return 100.0 * right / total if total else float("nan")


def metrics_from_scores(y_true: Sequence[int], scores: np.ndarray) -> dict:
    """All paper metrics from 5-way scores [n_pairs, 5] (pairs in sentence x CATEGORIES order)."""
    scores = np.asarray(scores, dtype=np.float64)
    y_pred = [int(i) for i in scores.argmax(1)]
    p, r, f = aspect_prf(y_true, y_pred)
    return {
        "aspect_precision": p, "aspect_recall": r, "aspect_f1": f,
        "acc_4way": sentiment_accuracy(y_true, y_pred, scores, 4),
        "acc_3way": sentiment_accuracy(y_true, y_pred, scores, 3),
        "acc_binary": sentiment_accuracy(y_true, y_pred, scores, 2),
        "n_pairs": len(y_true),
    }


def pair_scores(examples: Sequence[PairExample], probs: np.ndarray, task: str):
    """Classifier probabilities -> (gold 5-way labels, 5-way scores) per (sentence, category).
    B tasks: P(yes) of the 5 rows of an aspect, softmax-normalised over the rows."""
    probs = np.asarray(probs, dtype=np.float64)
    if not is_binary(task):
        return [e.label for e in examples], probs
    yes = probs[:, 1].reshape(-1, len(LABELS))
    e = np.exp(yes - yes.max(1, keepdims=True))
    scores = e / e.sum(1, keepdims=True)
    gold = [LABELS.index(examples[k].gold) for k in range(0, len(examples), len(LABELS))]
    return gold, scores


# ---------------------------------------------------------------------------------------------
# Model handling


def make_classifier(loaded, task: str, seed: int = 0):
    """A NEW sequence classifier for ``task`` whose encoder weights are a copy of
    ``loaded.model`` (the given model is never touched)."""
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
    clf.eval()
    return clf


def _tokenize(tokenizer, examples: Sequence[PairExample], max_length: int):
    enc = tokenizer([e.text_a for e in examples], [e.text_b for e in examples],
                    truncation=True, max_length=max_length)
    return enc


def _batch(tokenizer, enc, idx: Sequence[int]):
    feats = [{k: enc[k][i] for k in enc.keys()} for i in idx]
    return tokenizer.pad(feats, return_tensors="pt")


def bucketed_batches(lengths: Sequence[int], batch_size: int, rng: random.Random,
                     bucket_factor: int = 50) -> list[list[int]]:
    """Shuffle, cut into chunks of ``batch_size * bucket_factor``, sort each chunk by length,
    batch it, and shuffle the batch order: little padding, still random."""
    order = list(range(len(lengths)))
    rng.shuffle(order)
    chunk = max(batch_size, batch_size * bucket_factor)
    batches = []
    for k in range(0, len(order), chunk):
        part = sorted(order[k:k + chunk], key=lambda i: lengths[i])
        batches += [part[j:j + batch_size] for j in range(0, len(part), batch_size)]
    rng.shuffle(batches)
    return batches


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


def fine_tune(loaded, examples: Sequence[PairExample], task: str, epochs: float = 4,
              lr: float = 2e-5, warmup: float = 0.1, batch_size: int = 24, max_length: int = 128,
              seed: int = 0, max_steps: int | None = None,
              progress: Callable[[TrainProgress], None] | None = None,
              should_stop: Callable[[], bool] | None = None,
              time_budget_s: float | None = None,
              epoch_end: Callable[[int, object], None] | None = None) -> FineTuneResult:
    """Fine-tune a copy of ``loaded.model`` as a pair classifier for ``task``.

    AdamW (weight decay 0.01, none on biases and LayerNorm), linear warmup over ``warmup``
    of the steps then linear decay, length-bucketed shuffled batches. ``epochs`` may be
    fractional; ``max_steps`` caps the steps. ``progress`` is called after every step.
    ``time_budget_s``: every 25 steps the planned number of steps is lowered to what fits in
    the remaining time at the measured speed, and the warmup/decay schedule follows the new
    plan, so training ends on time with the learning rate decayed to zero. ``epoch_end(k,
    model)`` is called after each full pass k (1-based; not after a pass cut short) with
    the model in eval mode (training resumes afterwards): a learning curve on held-out data."""
    import torch
    if not examples:
        raise DataError("No training examples.")
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    model = make_classifier(loaded, task, seed)
    tok = loaded.tokenizer
    enc = _tokenize(tok, examples, max_length)
    labels = torch.tensor([e.label for e in examples], dtype=torch.long)
    lengths = [len(x) for x in enc["input_ids"]]
    rng = random.Random(seed)
    steps_per_epoch = math.ceil(len(examples) / batch_size)
    total = max(1, int(math.ceil(steps_per_epoch * epochs)))
    if max_steps:
        total = min(total, int(max_steps))
    no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight", "LayerNorm.bias")
    params = [
        {"params": [p for n, p in model.named_parameters() if not any(k in n for k in no_decay)],
         "weight_decay": 0.01},
        {"params": [p for n, p in model.named_parameters() if any(k in n for k in no_decay)],
         "weight_decay": 0.0},
    ]
    opt = torch.optim.AdamW(params, lr=lr)
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
        for idx in bucketed_batches(lengths, batch_size, rng):
            if step >= plan["total"] or (should_stop and should_stop()):
                full_pass = False
                break
            batch = _batch(tok, enc, idx)
            out = model(**batch, labels=labels[idx])
            out.loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
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
    model.eval()
    return FineTuneResult(model, tok, losses, time.perf_counter() - t0, per_epoch, len(examples))


def predict_probs(model, tokenizer, examples: Sequence[PairExample], batch_size: int = 64,
                  max_length: int = 128, head_mask: np.ndarray | None = None,
                  progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """Softmax probabilities [n, num_labels] for the pairs (optionally with heads masked)."""
    import torch

    enc = _tokenize(tokenizer, examples, max_length)
    lengths = [len(x) for x in enc["input_ids"]]
    order = sorted(range(len(examples)), key=lambda i: lengths[i])
    out = np.zeros((len(examples), model.config.num_labels), dtype=np.float64)
    ctx = masked_heads(model, head_mask) if head_mask is not None else contextlib.nullcontext()
    model.eval()
    with ctx, torch.no_grad():
        for k in range(0, len(order), batch_size):
            idx = order[k:k + batch_size]
            logits = model(**_batch(tokenizer, enc, idx)).logits
            out[idx] = torch.softmax(logits.float(), -1).numpy()
            if progress:
                progress(min(k + batch_size, len(order)), len(order))
    return out


def evaluate(model, tokenizer, examples: Sequence[PairExample], task: str,
             head_mask: np.ndarray | None = None, max_length: int = 128,
             progress: Callable[[int, int], None] | None = None) -> dict:
    """The paper's metrics (percent) of ``model`` on ``examples``."""
    probs = predict_probs(model, tokenizer, examples, head_mask=head_mask,
                          max_length=max_length, progress=progress)
    gold, scores = pair_scores(examples, probs, task)
    return metrics_from_scores(gold, scores)


# ---------------------------------------------------------------------------------------------
# Head masking (transformers 5 dropped the ``head_mask`` argument: zero the head's slice of the
# context vector before the attention output projection, which is what head_mask did)


def _attention_output_projections(model) -> list:
    base = getattr(model, getattr(model, "base_model_prefix", ""), model)
    if hasattr(base, "encoder") and hasattr(base.encoder, "layer"):
        layers = base.encoder.layer
        return [layer.attention.output.dense for layer in layers]
    if hasattr(base, "transformer") and hasattr(base.transformer, "layer"):  # DistilBERT
        return [layer.attention.out_lin for layer in base.transformer.layer]
    raise InputError("Head masking is not supported for this architecture.")


@contextlib.contextmanager
def masked_heads(model, head_mask):
    """Within the block, heads with ``head_mask[l, h] == 0`` contribute nothing."""
    import torch

    mask = np.asarray(head_mask, dtype=np.float32)
    projs = _attention_output_projections(model)
    n_heads = model.config.num_attention_heads
    if mask.shape != (len(projs), n_heads):
        raise InputError(f"head_mask must have shape ({len(projs)}, {n_heads}).")
    handles = []
    for layer, proj in enumerate(projs):
        if mask[layer].all():
            continue
        width = proj.in_features // n_heads
        scale = torch.tensor(np.repeat(mask[layer], width))

        def hook(module, args, scale=scale):
            return (args[0] * scale.to(args[0].dtype),) + tuple(args[1:])

        handles.append(proj.register_forward_pre_hook(this_thread_only(hook)))
    try:
        yield model
    finally:
        for h in handles:
            h.remove()


# ---------------------------------------------------------------------------------------------
# Checkpoints


def check_checkpoint_target(out_dir) -> Path:
    """The resolved folder a checkpoint may be written to: new, empty, or an earlier
    checkpoint of this dashboard (replaced); any other file or folder is refused."""
    out = Path(out_dir).expanduser().resolve()
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / CARD_NAME).exists())):
        raise InputError(f"{out} exists and is not an ABSA checkpoint; choose a new folder.")
    return out


def finite_json(obj):
    """``obj`` with NaN/inf (a metric with nothing to count, e.g. binary accuracy without
    positive/negative gold) as None and numpy scalars as Python numbers: strict JSON."""
    if isinstance(obj, dict):
        return {k: finite_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite_json(v) for v in obj]
    if hasattr(obj, "item") and getattr(obj, "ndim", 1) == 0:  # numpy scalar
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def save_checkpoint(model, tokenizer, out_dir, card: dict) -> Path:
    """Write model (safetensors), tokenizer and ``absa_card.json`` to a temporary folder next
    to ``out_dir`` and rename it into place, so a crash never leaves a half-written model.
    An existing checkpoint of this dashboard is replaced; any other non-empty folder is refused."""
    out = check_checkpoint_target(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        (tmp / CARD_NAME).write_text(json.dumps(finite_json(card), indent=2, default=float,
                                                allow_nan=False), encoding="utf-8")
        old = None
        if out.exists():
            old = out.parent / f".{out.name}.old-{os.getpid()}-{int(time.time())}"
            os.rename(out, old)
        os.rename(tmp, out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def read_card(path) -> dict:
    p = Path(path).expanduser()
    if not p.is_dir():
        raise InputError(f"The folder {path} does not exist.")
    card = p / CARD_NAME
    if not card.is_file():
        raise InputError(f"{path} is not an ABSA checkpoint of this dashboard ({CARD_NAME} is "
                         "missing).")
    try:
        data = json.loads(card.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: {CARD_NAME} is not valid JSON.") from exc
    if data.get("task") not in TASKS:
        raise InputError(f"{path}: the card names no known task ({data.get('task')!r}).")
    return data


def load_checkpoint(path, task: str | None = None):
    """Load a checkpoint folder -> (LoadedModel with the classifier, card). Refuses folders of
    another task or without a matching classification head."""
    from transformers import AutoModelForSequenceClassification

    from analysis.models import load_model

    card = read_card(path)
    if task is not None and card["task"] != check_task(task):
        raise InputError(f"{path} was fine-tuned for {TASK_NAMES[card['task']]}, not "
                         f"{TASK_NAMES[task]}.")
    loaded = load_model(str(path), model_class=AutoModelForSequenceClassification)
    if getattr(loaded.model.config, "num_labels", None) != num_labels(card["task"]):
        raise InputError(f"{path}: the classifier has {loaded.model.config.num_labels} labels; "
                         f"{TASK_NAMES[card['task']]} needs {num_labels(card['task'])}.")
    return loaded, card


def make_card(base_spec: str, task: str, pair_order: str, data: str, seed: int, epochs: float,
              max_length: int, result: FineTuneResult, metrics: dict | None = None,
              lr: float = 2e-5, **extra) -> dict:
    return {
        "kind": "absa-sentence-pair", "base_model": base_spec, "task": task,
        "task_name": TASK_NAMES[task], "pair_order": pair_order, "labels": list(LABELS),
        "categories": list(CATEGORIES), "data": data, "seed": seed, "epochs": epochs,
        "max_length": max_length, "lr": lr, "warmup": 0.1,
        "n_train_pairs": result.n_examples, "train_seconds": round(result.seconds, 1),
        "seconds_per_epoch": [round(s, 1) for s in result.seconds_per_epoch],
        "final_loss": result.losses[-1] if result.losses else None,
        "metrics": metrics or {},
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **extra,
    }


def as_loaded(loaded, model, spec: str | None = None):
    """A LoadedModel view of a fine-tuned classifier (same tokenizer)."""
    return type(loaded)(spec=spec or loaded.spec, name=spec or loaded.name,
                        tokenizer=loaded.tokenizer, model=model, model_type=loaded.model_type,
                        n_layers=loaded.n_layers, n_heads=loaded.n_heads,
                        n_params=sum(p.numel() for p in model.parameters()),
                        max_length=loaded.max_length, special_tokens=loaded.special_tokens)
