"""A classifier's metrics over any subset of its rows, with percentile bootstrap 95% intervals
(docs/METHODS.md, "Predictions").

Every metric is a function of per-row counts summed over the rows (:func:`row_counts`), so a
slice is a sum over its rows and a bootstrap resample a matrix product (units: review
sentences for ABSA, examples otherwise):

- accuracy ``= 100 right / rows``; mean loss ``= sum of losses / rows``;
- macro F1 ``= 100 mean_c 2 TP_c / (predicted_c + gold_c)`` over the classes that occur as a
  gold label or a prediction (scikit-learn's ``f1_score(average="macro")``; a test checks it);
- ABSA, the paper's metrics from :func:`analysis.aspects.causal.pair_counts` (by the
  paper's own functions, per pair): aspect F1, 4-way and 3-way accuracy, so that the whole set
  gives :func:`analysis.absa.tasks.metrics_from_scores`'s values.

The intervals come from one set of resamples of the data's units (:class:`Resamples`): each
slice's value is recomputed on each resample's rows of that slice; a change between two models
(:func:`slice_changes`) uses the same resamples for both, the interval of a paired difference.
"""

from __future__ import annotations

import numpy as np

from analysis.aspects.causal import metrics_of, pair_counts
from analysis.core.intervals import N_BOOT, resamples

ABSA_METRICS = ("aspect_f1", "acc_4way", "acc_3way")
LOSS = "loss"
METRIC_NAMES = {"accuracy": "accuracy", "macro_f1": "macro F1", "aspect_f1": "aspect F1",
                "acc_4way": "4-way accuracy", "acc_3way": "3-way accuracy", LOSS: "mean loss"}
ALPHA = 0.05


def metric_names(absa: bool) -> tuple[str, ...]:
    """The metrics of a data set: accuracy and macro F1, the ABSA task's own, the mean loss."""
    return ("accuracy", "macro_f1") + (ABSA_METRICS if absa else ()) + (LOSS,)


def higher_is_better(metric: str) -> bool:
    return metric != LOSS


def row_counts(gold, scores, losses, absa: bool) -> np.ndarray:
    """[n, K] per-row counts: right, 1, loss, then per class TP, predicted, gold (3 C columns),
    then for ABSA the 9 counts of :func:`analysis.aspects.causal.pair_counts`."""
    gold = np.asarray(gold, dtype=np.int64)
    scores = np.asarray(scores, dtype=np.float64)
    n, c = scores.shape
    pred = scores.argmax(1)
    onehot_p, onehot_g = np.eye(c)[pred], np.eye(c)[gold]
    cols = [(pred == gold)[:, None], np.ones((n, 1)), np.asarray(losses, float)[:, None],
            onehot_p * onehot_g, onehot_p, onehot_g]
    if absa:
        cols.append(pair_counts(gold, scores))
    return np.concatenate([np.asarray(x, dtype=np.float64) for x in cols], axis=1)


def metric_values(sums: np.ndarray, n_classes: int, absa: bool) -> dict[str, np.ndarray]:
    """The metrics from summed counts [..., K] (NaN where nothing is counted)."""
    c = n_classes
    with np.errstate(invalid="ignore", divide="ignore"):
        rows = sums[..., 1]
        out = {"accuracy": np.where(rows > 0, 100.0 * sums[..., 0] / np.maximum(rows, 1),
                                    np.nan)}
        tp, pred, gold = (sums[..., 3 + k * c:3 + (k + 1) * c] for k in range(3))
        seen = (pred + gold) > 0
        f1 = np.where(seen, 2.0 * tp / np.where(seen, pred + gold, 1), 0.0)
        n_seen = seen.sum(-1)
        out["macro_f1"] = np.where(n_seen > 0, 100.0 * f1.sum(-1) / np.maximum(n_seen, 1),
                                   np.nan)
        if absa:
            paper = metrics_of(sums[..., 3 + 3 * c:])
            out.update({k: paper[k] for k in ABSA_METRICS})
        out[LOSS] = np.where(rows > 0, sums[..., 2] / np.maximum(rows, 1), np.nan)
    return out


class Resamples:
    """The data's units (review sentences for ABSA, examples otherwise) resampled once:
    ``n_boot`` multinomial draws of all units (:func:`analysis.core.intervals.resamples`,
    ``weights`` [B, U]). Every slice, change and flip rate of a result is measured on these
    same resamples: a slice's value in a resample is its rows' counts in that resample (a
    resample may hold none of a small slice's rows: left out of its interval)."""

    def __init__(self, units, n_boot: int = N_BOOT, seed: int = 0):
        _, self.index = np.unique(np.asarray(units), return_inverse=True)
        self.n_units = int(self.index.max()) + 1 if len(self.index) else 0
        weights = resamples(self.n_units, n_boot, seed) if self.n_units else None
        # kept as whole counts (a page keeps them with its result: 20 MB for 10,000 units)
        self.weights = weights if weights is None or weights.max() >= 2 ** 16 \
            else weights.astype(np.uint16)

    def sums(self, counts: np.ndarray, masks: list) -> tuple[np.ndarray, np.ndarray]:
        """(point sums [S, K], resampled sums [S, B, K]) of ``counts`` [n, K] over the rows of
        each of the S ``masks``."""
        k = counts.shape[1]
        per_unit = np.zeros((self.n_units, k * len(masks)))
        for s, mask in enumerate(masks):
            rows = np.flatnonzero(np.asarray(mask, dtype=bool))
            np.add.at(per_unit[:, s * k:(s + 1) * k], self.index[rows], counts[rows])
        point = per_unit.sum(0).reshape(len(masks), k)
        boot = (self.weights.astype(np.float64) @ per_unit).reshape(-1, len(masks), k) \
            .transpose(1, 0, 2) if self.weights is not None else np.zeros((len(masks), 0, k))
        return point, boot


def _interval(values: np.ndarray) -> tuple[float, float]:
    v = values[np.isfinite(values)]
    if not v.size:
        return float("nan"), float("nan")
    lo, hi = np.quantile(v, [ALPHA / 2, 1 - ALPHA / 2])
    return float(lo), float(hi)


def _empty(names, keys=("value", "low", "high")) -> dict:
    return {m: {**{k: float("nan") for k in keys}, "n": 0} for m in names}


def slice_metrics(counts: np.ndarray, boot: Resamples, masks: dict, n_classes: int,
                  absa: bool) -> dict[str, dict]:
    """key -> metric -> {"value", "low", "high", "n"} over the rows of each mask of ``masks``
    (key -> bool [n]; ``n``: its rows), intervals over ``boot``'s resamples."""
    names = metric_names(absa)
    point, sums = boot.sums(counts, list(masks.values()))
    out = {}
    for s, (key, mask) in enumerate(masks.items()):
        n = int(np.count_nonzero(mask))
        if not n:
            out[key] = _empty(names)
            continue
        p = metric_values(point[s], n_classes, absa)
        b = metric_values(sums[s], n_classes, absa)
        out[key] = {m: {"value": float(p[m]), **dict(zip(("low", "high"), _interval(b[m]))),
                        "n": n} for m in names}
    return out


def slice_changes(counts_a: np.ndarray, counts_b: np.ndarray, boot: Resamples, masks: dict,
                  n_classes: int, absa: bool) -> dict[str, dict]:
    """key -> metric -> {"a", "b", "change", "low", "high", "n"}: model b's value minus model
    a's on each mask's rows, with the paired interval (both on the same resamples)."""
    names = metric_names(absa)
    pa, sa = boot.sums(counts_a, list(masks.values()))
    pb, sb = boot.sums(counts_b, list(masks.values()))
    out = {}
    for s, (key, mask) in enumerate(masks.items()):
        n = int(np.count_nonzero(mask))
        if not n:
            out[key] = _empty(names, ("a", "b", "change", "low", "high"))
            continue
        va, vb = metric_values(pa[s], n_classes, absa), metric_values(pb[s], n_classes, absa)
        ba, bb = metric_values(sa[s], n_classes, absa), metric_values(sb[s], n_classes, absa)
        out[key] = {}
        for m in names:
            lo, hi = _interval(bb[m] - ba[m])
            out[key][m] = {"a": float(va[m]), "b": float(vb[m]),
                           "change": float(vb[m] - va[m]), "low": lo, "high": hi, "n": n}
    return out


def rates(hits, has, boot: Resamples, masks: dict) -> dict[str, dict]:
    """key -> {"value", "low", "high", "n"}: the share (percent) of the rows of each mask that
    ``has`` (bool [n]: a counterfactual exists) where ``hits`` holds (it flipped), with the
    interval over ``boot``'s resamples (the flip rate of a counterfactual kind)."""
    counts = np.stack([np.asarray(hits, dtype=np.float64), np.ones(len(hits))], 1)
    has = np.asarray(has, dtype=bool)
    point, sums = boot.sums(counts, [has & np.asarray(m, dtype=bool) for m in masks.values()])
    out = {}
    for s, key in enumerate(masks):
        n = int(point[s, 1])
        if not n:
            out[key] = {"value": float("nan"), "low": float("nan"), "high": float("nan"), "n": 0}
            continue
        with np.errstate(invalid="ignore", divide="ignore"):
            lo, hi = _interval(100.0 * sums[s, :, 0] / sums[s, :, 1])
        out[key] = {"value": float(100.0 * point[s, 0] / n), "low": lo, "high": hi, "n": n}
    return out


def confusion(gold, pred, n_classes: int) -> np.ndarray:
    """[C, C] counts: row = gold label, column = prediction."""
    out = np.zeros((n_classes, n_classes), dtype=np.int64)
    np.add.at(out, (np.asarray(gold, dtype=np.int64), np.asarray(pred, dtype=np.int64)), 1)
    return out
