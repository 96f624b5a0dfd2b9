"""The corpus view (docs/METHODS.md, "Causal patching"): the per-head map of every held-out ABSA
pair against its generated counterfactual (another aspect, or the opposite opinion word),
averaged, with percentile bootstrap 95% intervals over sentences (:mod:`analysis.core.intervals`),
and its Spearman correlation with Head importance's measured drops, with the Aspect heads
page's top heads and the [SEP] heads to mark."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from analysis.core.errors import DataError
from analysis.core.intervals import N_BOOT, resamples
from analysis.patching.counterfactuals import KINDS, opinion_pool, suggest
from analysis.patching.run import patch_pair
from analysis.absa.tasks import build_examples
from analysis.importance import importance_study
from analysis.importance.links import aspect_heads, sep_heads
from analysis.patching import metric


@dataclass
class CorpusPatching:
    contrast: str
    direction: str
    description: str
    n_pairs: int  # pairs averaged
    n_sentences: int
    skipped: dict[str, int]  # reason -> pairs left out
    effects: np.ndarray  # [n, L, H]
    mean: np.ndarray  # [L, H]
    ci: np.ndarray  # [L, H, 2]
    importance: np.ndarray | None = None  # [L, H] Head importance's drops
    importance_metric: str | None = None
    spearman: float | None = None
    aspect_heads: list = field(default_factory=list)
    sep_heads: list = field(default_factory=list)
    seconds: float = 0.0

    def to_json(self) -> dict:
        def nested(a):
            a = np.asarray(a, dtype=np.float64)
            return [nested(x) for x in a] if a.ndim else (None if not np.isfinite(a)
                                                          else float(a))

        return {"contrast": self.contrast, "direction": self.direction,
                "data": self.description, "pairs": self.n_pairs,
                "sentences": self.n_sentences, "skipped": dict(self.skipped),
                "heads": nested(self.mean), "heads_ci": nested(self.ci),
                "importance_metric": self.importance_metric,
                "importance_drops": None if self.importance is None
                else nested(self.importance),
                "spearman": None if self.spearman is None or not np.isfinite(self.spearman)
                else float(self.spearman),
                "aspect_heads": [list(h) for h in self.aspect_heads],
                "sep_heads": [list(h) for h in self.sep_heads]}

    @classmethod
    def from_json(cls, data: dict) -> CorpusPatching:
        """The corpus view back from its JSON (each pair's own map is not in it: no rows)."""
        def arr(x):
            return np.asarray(np.where(np.equal(np.asarray(x, dtype=object), None), np.nan,
                                       np.asarray(x, dtype=object)), dtype=float)

        mean = arr(data["heads"])
        drops = data["importance_drops"]
        return cls(data["contrast"], data["direction"], data["data"], int(data["pairs"]),
                   int(data["sentences"]), dict(data["skipped"]),
                   np.zeros((0, *mean.shape)), mean, arr(data["heads_ci"]),
                   None if drops is None else arr(drops), data["importance_metric"],
                   data["spearman"], [tuple(h) for h in data["aspect_heads"]],
                   [tuple(h) for h in data["sep_heads"]])


def sentence_ci(effects: np.ndarray, units: np.ndarray, n_boot: int = N_BOOT,
                seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(mean [...], 95% interval [..., 2]) of per-pair ``effects`` [n, ...], the sentences
    (``units``) resampled: each resample's mean is its pairs' sum over its pairs' count."""
    shape = effects.shape[1:]
    flat = effects.reshape(len(effects), -1)
    _, idx = np.unique(units, return_inverse=True)
    S = idx.max() + 1
    sums = np.zeros((S, flat.shape[1]))
    np.add.at(sums, idx, flat)
    counts = np.bincount(idx, minlength=S).astype(np.float64)
    c = resamples(S, n_boot, seed)
    boot = (c @ sums) / (c @ counts)[:, None]
    lo, hi = np.quantile(boot, 0.025, axis=0), np.quantile(boot, 0.975, axis=0)
    return flat.mean(0).reshape(shape), np.stack([lo, hi], -1).reshape(shape + (2,))


def spearman(a, b) -> float:
    """Spearman's rank correlation (scipy) over the heads; NaN when either is constant."""
    # lazy: imported when used: scipy (heavy)
    from scipy.stats import spearmanr

    a, b = np.ravel(a), np.ravel(b)
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 3 or np.ptp(a[ok]) == 0 or np.ptp(b[ok]) == 0:
        return float("nan")
    return float(spearmanr(a[ok], b[ok]).statistic)


def corpus_patching(loaded, ev, *, contrast: str = "aspect", direction: str = "noising",
                    max_length: int | None = None, importance: bool = True,
                    marks: bool = True, n_boot: int = N_BOOT, seed: int = 0,
                    min_gap: float | None = None,
                    progress: Callable[[float, str], None] | None = None) -> CorpusPatching:
    """Every pair of ``ev`` (an ABSA :class:`analysis.importance.evalset.EvalSet`) patched
    head by head against its first suggested counterfactual of kind ``contrast``; pairs with
    no same-length counterfactual, or whose counterfactual moves the logit difference by less
    than ``min_gap`` (default :data:`analysis.patching.metric.MIN_GAP`), are left out
    (counted). With ``importance`` Head importance's study runs on the same pairs (its default
    method and metric) and the Spearman of the mean effects' size against its drops is given;
    with ``marks`` the Aspect heads page's top heads and the [SEP] heads."""
    min_gap = metric.MIN_GAP if min_gap is None else float(min_gap)
    if contrast not in KINDS:
        raise DataError(f"Unknown counterfactual kind {contrast!r}: use aspect or opinion.")
    if ev.sentences is None or ev.task is None:
        raise DataError("The corpus view needs ABSA sentences (the example checkpoint's "
                        "held-out sentences, or ABSA data for a checkpoint with its card).")
    say = progress or (lambda f, t: None)
    t0 = time.perf_counter()
    examples = build_examples(ev.sentences, ev.task, ev.pair_order)
    pool = opinion_pool(ev.sentences)
    max_length = int(max_length or loaded.max_length)
    share = 0.7 if importance else 0.95
    effects, units = [], []
    skipped = {"no counterfactual of the same length": 0,
               f"the counterfactual moves the logit difference by less than {min_gap:g}": 0}
    reasons = list(skipped)
    for k, ex in enumerate(examples):
        row = ev.sentences[ex.sentence]
        found = suggest(loaded.tokenizer, row, ex, ev.task, pool, max_length,
                        kinds=(contrast,))[contrast]
        if not found:
            skipped[reasons[0]] += 1
        else:
            s = found[0]
            res = patch_pair(loaded, ex.text_a, ex.text_b, s.text, s.pair, direction=direction,
                             sites=("heads",), max_length=max_length)
            if not abs(res.contrast.gap) >= min_gap:
                skipped[reasons[1]] += 1
            else:
                effects.append(res.heads)
                units.append(ex.sentence)
        say(share * (k + 1) / len(examples), f"patching pair {k + 1}/{len(examples)}")
    if not effects:
        raise DataError("No pair of the data has a counterfactual that changes the model's "
                        "output: nothing to average.")
    effects_a = np.stack(effects)
    mean, ci = sentence_ci(effects_a, np.asarray(units), n_boot, seed)
    result = CorpusPatching(contrast, direction, ev.description, len(effects),
                            len(set(units)), {k: v for k, v in skipped.items() if v},
                            effects_a, mean, ci)
    if importance:
        imp = importance_study(loaded, ev, progress=lambda f, t: say(
            share + 0.2 * f, f"Head importance: {t}"))
        result.importance = imp.drops()
        result.importance_metric = imp.metric
        result.spearman = spearman(np.abs(mean), result.importance)
    if marks:
        say(0.92, "marking the aspect heads and the [SEP] heads")
        result.aspect_heads, result.sep_heads = aspect_heads(loaded, ev), sep_heads(loaded, ev)
    result.seconds = time.perf_counter() - t0
    say(1.0, "done")
    return result
