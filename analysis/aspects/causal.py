"""The causal check of aspect heads: the task metrics with no head masked, with the top-k
ranked heads of a kind masked, and with k random heads masked (docs/METHODS.md sections 7
and 8)."""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from analysis.absa.finetune import predict_probs
from analysis.absa.tasks import NONE, metrics_from_scores, pair_scores, sentiment_accuracy
from analysis.core.errors import DataError

METRIC_KEYS = ("aspect_f1", "acc_4way", "acc_3way", "acc_binary")
ROWS = 5  # rows (categories) per sentence, in CATEGORIES order
ACC_CLASSES = {"acc_4way": 4, "acc_3way": 3, "acc_binary": 2}


def pair_counts(gold, scores) -> np.ndarray:
    """[n_pairs, 9] the counts of :func:`sentence_counts`, per (sentence, category) pair: the
    pair's predicted, gold and shared aspect (0 in a sentence with no gold aspect, which aspect
    F1 skips), then its right and counted 4-way, 3-way and binary accuracy (by
    :func:`sentiment_accuracy` itself). Pairs come 5 to a sentence, in CATEGORIES order; any
    subset of pairs (a slice: one category, one gold label) sums to that subset's counts."""
    scores = np.asarray(scores, dtype=np.float64)
    gold = [int(g) for g in gold]
    pred = scores.argmax(1)
    out = np.zeros((len(gold), 9))
    for s in range(len(gold) // ROWS):
        rows = range(s * ROWS, (s + 1) * ROWS)
        if any(gold[j] != NONE for j in rows):
            for j in rows:
                out[j, :3] = pred[j] != NONE, gold[j] != NONE, (pred[j] != NONE) \
                    and (gold[j] != NONE)
        for c, classes in enumerate(ACC_CLASSES.values()):
            for j in rows:
                acc = sentiment_accuracy([gold[j]], [int(pred[j])], scores[j:j + 1], classes)
                if np.isfinite(acc):
                    out[j, 3 + 2 * c] += acc / 100.0
                    out[j, 4 + 2 * c] += 1
    return out


def sentence_counts(gold, scores) -> np.ndarray:
    """[n_sentences, 9] counts the metrics are sums of, per sentence: predicted, gold and
    shared aspects (0 for a sentence with no gold aspect, which aspect F1 skips), then right
    and counted pairs of the 4-way, 3-way and binary accuracies (the sums of
    :func:`pair_counts` over each sentence's pairs)."""
    per_pair = pair_counts(gold, scores)
    n = len(per_pair) // ROWS
    return per_pair[:n * ROWS].reshape(n, ROWS, 9).sum(1)


def metrics_of(sums: np.ndarray) -> dict[str, np.ndarray]:
    """The metrics (percent) from summed counts [..., 9] (NaN where nothing is counted)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        denom = sums[..., 0] + sums[..., 1]
        out = {"aspect_f1": np.where(denom > 0, 200.0 * sums[..., 2] / np.maximum(denom, 1),
                                     0.0)}
        for c, key in enumerate(ACC_CLASSES):
            n = sums[..., 4 + 2 * c]
            out[key] = np.where(n > 0, 100.0 * sums[..., 3 + 2 * c] / np.maximum(n, 1), np.nan)
    return out


def paired_interval(gold, full_scores, masked_scores, n_boot: int = 1000, seed: int = 0,
                    alpha: float = 0.05) -> dict[str, list[float]]:
    """Percentile bootstrap 95% interval of each metric's change ``masked - full``, sentences
    resampled with replacement (the same resample for both, so the interval is of the paired
    change). -> {metric: [low, high]} in points; [nan, nan] where the metric counts nothing."""
    a, b = sentence_counts(gold, full_scores), sentence_counts(gold, masked_scores)
    if not len(a):
        return {key: [float("nan")] * 2 for key in METRIC_KEYS}
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(len(a), np.full(len(a), 1.0 / len(a)), size=n_boot).astype(float)
    full, masked = metrics_of(counts @ a), metrics_of(counts @ b)
    out = {}
    for key in METRIC_KEYS:
        d = masked[key] - full[key]
        d = d[np.isfinite(d)]
        out[key] = ([float(np.quantile(d, alpha / 2)), float(np.quantile(d, 1 - alpha / 2))]
                    if len(d) else [float("nan")] * 2)
    return out


def head_mask_for(heads: Sequence[tuple[int, int]], n_layers: int, n_heads: int) -> np.ndarray:
    """[L, H] ones with 0 at the given (layer, head) pairs."""
    mask = np.ones((n_layers, n_heads), dtype=np.float32)
    for layer, head in heads:
        mask[layer, head] = 0.0
    return mask


def _run(model, tokenizer, examples, task: str, mask=None):
    """(metrics, 5-way scores, gold labels) of ``model`` on the pairs, heads masked by
    ``mask``."""
    probs = predict_probs(model, tokenizer, examples, head_mask=mask)
    gold, scores = pair_scores(examples, probs, task)
    return metrics_from_scores(gold, scores), np.asarray(scores, dtype=np.float64), gold


def _moved(scores: np.ndarray, ref: np.ndarray) -> tuple[float, int]:
    """(mean total-variation distance between the two score rows of each sentence-aspect pair,
    number of pairs whose predicted label changed): how far a mask moved the predictions."""
    tv = 0.5 * np.abs(scores - ref).sum(1)
    return float(tv.mean()) if len(tv) else 0.0, int((scores.argmax(1) != ref.argmax(1)).sum())


def causal_check(model, tokenizer, examples, task: str, ranked: Sequence[dict], k: int,
                 n_layers: int, n_heads: int, n_random: int = 3, seed: int = 0,
                 progress: Callable[[str], None] | None = None) -> dict:
    """Task metrics with no heads masked, the top-k ranked heads masked, and k random heads
    masked (mean of ``n_random`` draws), plus the changes against no masking; and how far each
    mask moved the predictions themselves (``moved_*``: mean total-variation distance of the
    predicted distributions; ``flipped_*``: pairs whose label changed), which shows the mask
    reached the prediction even when no metric moves. ``delta_random_draws``: each random
    draw's changes (the noise a top-k change is read against); ``random_band``: their
    [smallest, largest] per metric; ``ci_top_k``: the paired bootstrap 95% interval of the
    top-k change (:func:`paired_interval`, sentences resampled)."""
    top = [(r["layer"], r["head"]) for r in ranked[:k]]
    if not top:
        raise DataError("No ranked heads to mask.")
    if progress:
        progress("full model")
    full, ref, gold = _run(model, tokenizer, examples, task)
    if progress:
        progress(f"top-{k} masked")
    masked, top_scores, _ = _run(model, tokenizer, examples, task,
                              head_mask_for(top, n_layers, n_heads))
    rng = np.random.default_rng(seed)
    rand, moved = [], []
    all_heads = [(l_, h_) for l_ in range(n_layers) for h_ in range(n_heads)]
    for r in range(n_random):
        if progress:
            progress(f"random {k} masked ({r + 1}/{n_random})")
        pick = rng.choice(len(all_heads), size=len(top), replace=False)
        m, sc, _ = _run(model, tokenizer, examples, task,
                     head_mask_for([all_heads[i] for i in pick], n_layers, n_heads))
        rand.append(m)
        moved.append(_moved(sc, ref))
    random_mean = {key: float(np.mean([m[key] for m in rand])) for key in METRIC_KEYS}
    top_moved, top_flipped = _moved(top_scores, ref)
    draws = [{key: m[key] - full[key] for key in METRIC_KEYS} for m in rand]
    return {
        "k": len(top), "masked_heads": top, "n_pairs": len(ref),
        "full": {key: full[key] for key in METRIC_KEYS},
        "top_k": {key: masked[key] for key in METRIC_KEYS}, "random_k": random_mean,
        "delta_top_k": {key: masked[key] - full[key] for key in METRIC_KEYS},
        "delta_random_k": {key: random_mean[key] - full[key] for key in METRIC_KEYS},
        "delta_random_draws": draws,
        "random_band": {key: [float(min(d[key] for d in draws)), float(max(d[key] for d in draws))]
                        for key in METRIC_KEYS} if draws else {},
        "ci_top_k": paired_interval(gold, ref, top_scores, seed=seed),
        "moved_top_k": top_moved, "flipped_top_k": top_flipped,
        "moved_random_k": float(np.mean([m for m, _ in moved])) if moved else 0.0,
        "flipped_random_k": float(np.mean([f for _, f in moved])) if moved else 0.0,
    }


def evaluation_data(card: dict, data):
    """(sentences, description) to evaluate a loaded checkpoint on: the sentences of ``data``
    that its card names as held out, else all of ``data`` (which may then include training
    sentences)."""
    held = set(card.get("heldout_ids") or [])
    kept = (data.filter(lambda r: r["id"] in held)
            if held and "id" in data.column_names else None)
    if kept is not None and len(kept):
        return kept, f"the checkpoint's {len(kept)} held-out sentences (from its card)"
    return data, (f"the {data.num_rows} gold sentences of step 2 (the checkpoint's card names "
                  "no held-out sentences among them, so some may be training data)")
