"""Task metrics of a classifier's outputs as sums of per-unit counts, so that the paired
bootstrap resamples units with one matrix product (docs/METHODS.md section 12).

Every metric is ``scale * sum(num) / sum(den)`` over units (an ABSA sentence, else one
example): aspect F1 ``= 200 |S & G| / (|S| + |G|)`` (micro over sentences with a gold aspect,
as :func:`analysis.absa.tasks.aspect_prf`), 4-way accuracy ``= 100 right / gold aspects``,
accuracy ``= 100 right / examples``, mean loss ``= sum of losses / examples``. The point values
of the ABSA metrics come from :func:`analysis.absa.tasks.metrics_from_scores` itself; the
counts reproduce them (a test checks it).
"""

from __future__ import annotations

import numpy as np

from analysis.absa.tasks import LABELS, NONE, is_binary, metrics_from_scores, pair_scores

LOSS = "loss"
N_BOOT = 1000
METRIC_LABELS = {"aspect_f1": "aspect F1", "acc_4way": "4-way accuracy",
                 "accuracy": "accuracy", LOSS: "mean loss"}


def higher_is_better(metric: str) -> bool:
    return metric != LOSS


def softmax(logits: np.ndarray) -> np.ndarray:
    """Class probabilities as :func:`analysis.absa.finetune.predict_probs` makes them
    (float32 softmax, then float64)."""
    # lazy: imported when used: torch (heavy)
    import torch

    return torch.softmax(torch.from_numpy(np.asarray(logits, dtype=np.float32)), -1) \
        .numpy().astype(np.float64)


def example_losses(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Cross-entropy of each example against its gold label [..., n] (float64)."""
    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    idx = np.broadcast_to(np.asarray(labels), logp.shape[:-1])[..., None]
    return -np.take_along_axis(logp, idx, -1)[..., 0]


def _unit_sums(values: np.ndarray, units: np.ndarray, n_units: int) -> np.ndarray:
    return np.bincount(units, weights=np.asarray(values, dtype=np.float64), minlength=n_units)


class AccuracyScorer:
    """Accuracy (percent) of a classifier against gold labels, each example its own unit."""

    metrics = ("accuracy",)

    def __init__(self, labels: np.ndarray):
        self.labels = np.asarray(labels)

    def point(self, probs: np.ndarray) -> dict:
        return {"accuracy": 100.0 * float(np.mean(probs.argmax(-1) == self.labels))}

    def counts(self, probs: np.ndarray) -> dict:
        right = (probs.argmax(-1) == self.labels).astype(np.float64)
        return {"accuracy": (100.0 * right, np.ones_like(right), np.nan)}


class AbsaScorer:
    """The ABSA task's own metrics (Sun et al.; :mod:`analysis.absa.tasks`): aspect F1 and
    4-way accuracy, the sentence as unit."""

    metrics = ("aspect_f1", "acc_4way")

    def __init__(self, examples, task: str):
        self.examples, self.task = examples, task
        per = len(LABELS) if is_binary(task) else 1  # B tasks: 5 rows per (sentence, aspect)
        self.row_units = np.array([examples[k].sentence for k in range(0, len(examples), per)])

    def point(self, probs: np.ndarray) -> dict:
        m = metrics_from_scores(*pair_scores(self.examples, probs, self.task))
        return {k: m[k] for k in self.metrics}

    def counts(self, probs: np.ndarray) -> dict:
        gold, scores = pair_scores(self.examples, probs, self.task)
        gold = np.asarray(gold)
        pred = scores.argmax(1)
        n = int(self.row_units.max()) + 1
        g = _unit_sums(gold != NONE, self.row_units, n)
        s = _unit_sums(pred != NONE, self.row_units, n) * (g > 0)  # sentences without gold: out
        sg = _unit_sums((pred != NONE) & (gold != NONE), self.row_units, n)
        p4 = np.where(pred == NONE, scores[:, :4].argmax(1), pred)
        right = _unit_sums((p4 == gold) & (gold != NONE), self.row_units, n)
        return {"aspect_f1": (200.0 * sg, s + g, 0.0), "acc_4way": (100.0 * right, g, np.nan)}


def unit_counts(scorer, probs: np.ndarray, losses: np.ndarray, units: np.ndarray,
                n_units: int) -> dict:
    """metric -> (numerator [U], denominator [U], value when the denominator is 0), the
    scorer's metrics and the mean loss."""
    out = scorer.counts(probs)
    if len(out[scorer.metrics[0]][0]) != n_units:  # per-example counts -> per unit
        out = {k: (_unit_sums(a, units, n_units), _unit_sums(b, units, n_units), e)
               for k, (a, b, e) in out.items()}
    out[LOSS] = (_unit_sums(losses, units, n_units), _unit_sums(np.ones_like(losses), units,
                                                                  n_units), np.nan)
    return out


def ratio(num: np.ndarray, den: np.ndarray, empty: float) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), empty)


def resample_weights(n_units: int, n_boot: int = N_BOOT, seed: int = 0) -> np.ndarray:
    """[n_boot, n_units] multinomial counts: how often each unit is drawn in each resample
    (as :func:`analysis.aspects.heads.bootstrap_ci`)."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_units, np.full(n_units, 1.0 / n_units), size=n_boot) \
        .astype(np.float64)


def paired_ci(counts: list[tuple], base: tuple, weights: np.ndarray,
              alpha: float = 0.05) -> np.ndarray:
    """[len(counts), 2] percentile intervals of ``metric(ablation) - metric(intact)`` over the
    same resamples of units (paired bootstrap); resamples where either is undefined are left
    out."""
    ref = ratio(weights @ base[0], weights @ base[1], base[2])
    out = np.full((len(counts), 2), np.nan)
    for i, (num, den, empty) in enumerate(counts):
        diff = ratio(weights @ num, weights @ den, empty) - ref
        diff = diff[np.isfinite(diff)]
        if diff.size:
            out[i] = np.quantile(diff, [alpha / 2, 1 - alpha / 2])
    return out
