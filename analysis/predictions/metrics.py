"""A classifier's metrics over any subset of its rows, with percentile bootstrap 95% intervals
(docs/METHODS.md, "Predictions").

Every metric is a function of per-row counts summed over the rows (:func:`row_counts`), so a
slice is a sum over its rows and a bootstrap resample a matrix product
(:func:`analysis.core.intervals.resamples` over the slice's units: review sentences for ABSA,
examples otherwise):

- accuracy ``= 100 right / rows``; mean loss ``= sum of losses / rows``;
- macro F1 ``= 100 mean_c 2 TP_c / (predicted_c + gold_c)`` over the classes that occur as a
  gold label or a prediction (scikit-learn's ``f1_score(average="macro")``; a test checks it);
- ABSA, the paper's metrics from :func:`analysis.aspects.causal.pair_counts` (by the
  paper's own functions, per pair): aspect F1, 4-way and 3-way accuracy, so that the whole set
  gives :func:`analysis.absa.tasks.metrics_from_scores`'s values.

A change between two models (:func:`slice_change`) uses the same resamples for both: the
interval of a paired difference.
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


def _unit_sums(counts: np.ndarray, units: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """[U, K] counts summed per unit over ``rows`` (units renumbered 0..U-1)."""
    _, inv = np.unique(units[rows], return_inverse=True)
    out = np.zeros((int(inv.max()) + 1 if len(inv) else 0, counts.shape[1]))
    np.add.at(out, inv, counts[rows])
    return out


def _interval(values: np.ndarray) -> tuple[float, float]:
    v = values[np.isfinite(values)]
    if not v.size:
        return float("nan"), float("nan")
    lo, hi = np.quantile(v, [ALPHA / 2, 1 - ALPHA / 2])
    return float(lo), float(hi)


def slice_metrics(counts: np.ndarray, units: np.ndarray, mask, n_classes: int, absa: bool,
                  n_boot: int = N_BOOT, seed: int = 0) -> dict[str, dict]:
    """metric -> {"value", "low", "high", "n"} over the rows of ``mask`` (bool [n]); the
    interval resamples the slice's units (``n``: its rows)."""
    rows = np.flatnonzero(np.asarray(mask, dtype=bool))
    names = metric_names(absa)
    if not len(rows):
        return {m: {"value": float("nan"), "low": float("nan"), "high": float("nan"), "n": 0}
                for m in names}
    per_unit = _unit_sums(counts, units, rows)
    point = metric_values(per_unit.sum(0), n_classes, absa)
    boot = metric_values(resamples(len(per_unit), n_boot, seed) @ per_unit, n_classes, absa)
    return {m: {"value": float(point[m]), **dict(zip(("low", "high"), _interval(boot[m]))),
                "n": int(len(rows))} for m in names}


def slice_change(counts_a: np.ndarray, counts_b: np.ndarray, units: np.ndarray, mask,
                 n_classes: int, absa: bool, n_boot: int = N_BOOT,
                 seed: int = 0) -> dict[str, dict]:
    """metric -> {"a", "b", "change", "low", "high", "n"}: model b's value minus model a's on
    the rows of ``mask``, with the paired bootstrap interval (the same resamples of the
    slice's units for both)."""
    rows = np.flatnonzero(np.asarray(mask, dtype=bool))
    names = metric_names(absa)
    if not len(rows):
        nan = float("nan")
        return {m: {"a": nan, "b": nan, "change": nan, "low": nan, "high": nan, "n": 0}
                for m in names}
    ua, ub = _unit_sums(counts_a, units, rows), _unit_sums(counts_b, units, rows)
    pa, pb = metric_values(ua.sum(0), n_classes, absa), metric_values(ub.sum(0), n_classes,
                                                                         absa)
    w = resamples(len(ua), n_boot, seed)
    ba, bb = metric_values(w @ ua, n_classes, absa), metric_values(w @ ub, n_classes, absa)
    out = {}
    for m in names:
        lo, hi = _interval(bb[m] - ba[m])
        out[m] = {"a": float(pa[m]), "b": float(pb[m]), "change": float(pb[m] - pa[m]),
                  "low": lo, "high": hi, "n": int(len(rows))}
    return out


def rate(hits, units, mask, n_boot: int = N_BOOT, seed: int = 0) -> dict:
    """{"value", "low", "high", "n"}: the share (percent) of the rows of ``mask`` where
    ``hits`` (bool [n]) holds, with the bootstrap interval over their units (the flip rate of
    a counterfactual kind)."""
    rows = np.flatnonzero(np.asarray(mask, dtype=bool))
    if not len(rows):
        return {"value": float("nan"), "low": float("nan"), "high": float("nan"), "n": 0}
    counts = np.stack([np.asarray(hits, dtype=np.float64), np.ones(len(hits))], 1)
    per_unit = _unit_sums(counts, np.asarray(units), rows)
    boot = resamples(len(per_unit), n_boot, seed) @ per_unit
    lo, hi = _interval(100.0 * boot[:, 0] / boot[:, 1])
    total = per_unit.sum(0)
    return {"value": float(100.0 * total[0] / total[1]), "low": lo, "high": hi,
            "n": int(len(rows))}


def confusion(gold, pred, n_classes: int) -> np.ndarray:
    """[C, C] counts: row = gold label, column = prediction."""
    out = np.zeros((n_classes, n_classes), dtype=np.int64)
    np.add.at(out, (np.asarray(gold, dtype=np.int64), np.asarray(pred, dtype=np.int64)), 1)
    return out
