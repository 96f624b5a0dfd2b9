"""The head importance study, one call for the page and the CLI (docs/METHODS.md section 12):
every single head and every layer disabled (one method), the metric and mean loss changes with
paired bootstrap intervals, gradient importance and its Spearman with the measured drops, and
optionally the pruning curves."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, ClassVar

import numpy as np

from analysis.core.errors import InputError
from analysis.core.hooks import ABLATION_METHODS
from analysis.importance import pruning as P
from analysis.importance.ablate import MAX_TOKENS, single_ablations
from analysis.importance.gradients import normalise_per_layer, spearman
from analysis.importance.job import AblationJob, eval_dataset
from analysis.importance.scoring import (LOSS, N_BOOT, example_losses, higher_is_better,
                                         paired_ci, resample_weights, softmax,
                                         unit_counts)
from analysis.core.execution.corpus import run_local
from analysis.core.study import Field, Schema, StudyResult

DEFAULT_METHOD = "uniform"


@dataclass
class ImportanceResult(StudyResult):
    """Everything the page shows and the CLI writes; per metric name (the task's metrics and
    ``loss``): intact value, changes [L, H] / [L] (ablated minus intact) and intervals. Its
    JSON (the CLI's, the precomputed example's) holds the chosen metric only: :data:`SCHEMA`."""

    SCHEMA: ClassVar[Schema] = Schema((
        Field("metric", "the metric of the numbers below (aspect_f1, acc_4way, accuracy or "
                        "loss)"),
        Field("intact", "the intact model's value of the metric"),
        Field("heads", "layers x heads (0-indexed): the change of the metric with that head "
                       "disabled (ablated minus intact)"),
        Field("heads_ci", "layers x heads x 2: its paired bootstrap 95% interval"),
        Field("layers", "per layer: the change with the whole layer disabled"),
        Field("gradient_importance", "layers x heads: Michel's gate gradients, normalised "
                                     "per layer"),
        Field("spearman", "Spearman correlation of gradient importance with the measured "
                          "drops (null when the drops are all equal)"),
        Field("pruning", "the pruning curves (null without --prune): fractions, the metric "
                         "by_importance, by_gradient, random_mean and random_band [low, high] "
                         "at each fraction"),
    ))

    metric: str  # the chosen metric (orders the pruning, the Spearman)
    method: str
    metrics: tuple[str, ...]
    description: str
    n_examples: int
    n_units: int
    intact: dict[str, float]
    heads: dict[str, np.ndarray]  # [L, H]
    heads_ci: dict[str, np.ndarray]  # [L, H, 2]
    layers: dict[str, np.ndarray]  # [L]
    layers_ci: dict[str, np.ndarray]  # [L, 2]
    gradient_raw: np.ndarray  # [L, H] mean |dL/dxi|
    gradient: np.ndarray  # [L, H] normalised per layer
    spearman: dict[str, float]  # metric -> Spearman(gradient, measured drop)
    pruning: dict | None = None
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def shape(self) -> tuple[int, int]:
        return self.gradient.shape

    def drops(self, metric: str | None = None) -> np.ndarray:
        """Measured drop per head (positive = the model got worse without it)."""
        m = metric or self.metric
        return -self.heads[m] if higher_is_better(m) else self.heads[m]

    def json_fields(self) -> dict:
        """The CLI's JSON (README "Head importance"): the chosen metric only."""
        m, pr = self.metric, self.pruning
        return {
            "metric": m, "intact": self.intact[m], "heads": self.heads[m],
            "heads_ci": self.heads_ci[m], "layers": self.layers[m],
            "gradient_importance": self.gradient, "spearman": self.spearman[m],
            "pruning": None if pr is None else {
                "fractions": list(pr["fractions"]), "by_importance": pr["by_importance"],
                "random_mean": pr["random_mean"], "by_gradient": pr["by_gradient"],
                "random_band": np.stack([pr["random_low"], pr["random_high"]], 1)},
        }

    @classmethod
    def from_json(cls, data: dict, method: str = DEFAULT_METHOD, description: str = "",
                  n_examples: int = 0) -> ImportanceResult:
        """The result back from its JSON, for its one metric: what the JSON does not hold
        (the way heads were disabled, the data's description and size, the layers'
        intervals: NaN) comes from the caller; the pruning curves' removable shares are
        computed again from the curves."""
        cls.SCHEMA.check(data)
        m = data["metric"]

        def arr(x):
            return np.asarray([np.nan if v is None else v for v in np.ravel(
                np.asarray(x, dtype=object))], dtype=float).reshape(np.shape(x))

        heads = arr(data["heads"])
        layers = arr(data["layers"])
        gradient = arr(data["gradient_importance"])
        intact = np.nan if data["intact"] is None else float(data["intact"])
        rho = np.nan if data["spearman"] is None else float(data["spearman"])
        pr = data["pruning"]
        pruning = None
        if pr is not None:
            band = arr(pr["random_band"])
            higher = higher_is_better(m)
            tol = 1.0 if higher else 0.05
            values = {k: arr(pr[k]) for k in ("by_importance", "by_gradient", "random_mean")}
            pruning = {"fractions": list(pr["fractions"]), **values,
                       "random_low": band[:, 0], "random_high": band[:, 1], "tolerance": tol,
                       "prunable": {k: P.prunable_fraction(pr["fractions"], v, intact, tol,
                                                           higher) for k, v in values.items()}}
        return cls(m, method, (m,), description, int(n_examples), int(n_examples),
                   {m: intact}, {m: heads}, {m: arr(data["heads_ci"])}, {m: layers},
                   {m: np.full((len(layers), 2), np.nan)}, gradient, gradient, {m: rho},
                   pruning)


def _values(ev, logits: np.ndarray, metric: str) -> np.ndarray:
    """The metric of each ablation's outputs [A, n, C] -> [A]."""
    if metric == LOSS:
        return example_losses(logits, ev.labels).mean(1)
    return np.array([ev.scorer.point(softmax(lg))[metric] for lg in logits])


def importance_study(loaded, ev, *, method: str = DEFAULT_METHOD, metric: str | None = None,
                     prune: bool = False, n_boot: int = N_BOOT, seed: int = 0,
                     fractions=P.FRACTIONS, random_seeds=P.RANDOM_SEEDS,
                     max_tokens: int | None = None,
                     progress: Callable[[float, str], None] | None = None,
                     run=None) -> ImportanceResult:
    """Disable every head and every layer of ``loaded`` (a classifier) on the examples of
    ``ev`` (:mod:`analysis.importance.evalset`) with ``method`` ("uniform": Kovaleva et al.;
    "mask": Michel et al.); ``metric`` defaults to the task's first (aspect F1, accuracy).
    ``progress(fraction, text)`` is told each stage. The forward work is a corpus job
    (:class:`analysis.importance.job.AblationJob`) run by ``run(job, loaded, dataset,
    progress)``: :func:`analysis.core.execution.corpus.run_local` by default (one shard, this
    process),
    the Ray path with the CLI's ``--ray``; the metrics are computed here on the merged outputs."""
    if method not in ABLATION_METHODS:
        raise InputError(f"Unknown method {method!r}; use uniform or mask.")
    names = tuple(ev.scorer.metrics) + (LOSS,)
    metric = metric or names[0]
    if metric not in names:
        raise InputError(f"Unknown metric {metric!r} for this data; use {', '.join(names)}.")
    say = progress or (lambda f, t: None)
    t0 = time.perf_counter()
    L, H = loaded.n_layers, loaded.n_heads
    run = run or run_local
    dataset = eval_dataset(ev)
    tokens = MAX_TOKENS if max_tokens is None else int(max_tokens)
    stages = 0.55 if prune else 0.85
    job = AblationJob(loaded.spec, single_ablations(L, H), method, True, tokens)
    ablated = run(job, loaded, dataset, lambda d, t: say(
        stages * d / t, f"disabling heads and layers, gradients ({d}/{t})"))
    logits = ablated.logits
    counts = [unit_counts(ev.scorer, softmax(lg), example_losses(lg, ev.labels), ev.units,
                          ev.n_units) for lg in logits]
    weights = resample_weights(ev.n_units, n_boot, seed)
    intact, heads, heads_ci, layers, layers_ci = {}, {}, {}, {}, {}
    point = {m: _values(ev, logits, m) for m in names}
    for m in names:
        values = point[m]
        intact[m] = float(values[0])
        ci = paired_ci([c[m] for c in counts[1:]], counts[0][m], weights)
        heads[m] = (values[1:1 + L * H] - values[0]).reshape(L, H)
        heads_ci[m] = ci[:L * H].reshape(L, H, 2)
        layers[m] = values[1 + L * H:] - values[0]
        layers_ci[m] = ci[L * H:]
    raw = ablated.gradient_raw
    norm = normalise_per_layer(raw)
    result = ImportanceResult(
        metric, method, names, ev.description, ev.n_examples, ev.n_units, intact, heads,
        heads_ci, layers, layers_ci, raw, norm, {}, notes=list(ev.notes))
    result.spearman = {m: spearman(norm, result.drops(m)) for m in names}
    if prune:
        say(0.6, "pruning curves")
        result.pruning = pruning_curves(loaded, ev, result, method, fractions, random_seeds,
                                        dataset, tokens, run, lambda d, t: say(
                                            0.6 + 0.4 * d / t, f"pruning curves ({d}/{t})"))
    result.seconds = time.perf_counter() - t0
    say(1.0, "done")
    return result


def pruning_curves(loaded, ev, result: ImportanceResult, method: str, fractions, seeds,
                   dataset, max_tokens: int = MAX_TOKENS, run=None, progress=None) -> dict:
    """The chosen metric after removing each fraction of the heads, in the order of the
    measured drops, of gradient importance, and of ``seeds`` random orders (one more
    :class:`AblationJob`, without gradients, on ``dataset``: :func:`eval_dataset` of ``ev``)."""
    m = result.metric
    shape = result.shape
    n = shape[0] * shape[1]
    orders = [P.order_by_drop(result.heads[m], result.heads[LOSS], higher_is_better(m)),
              P.order_by_gradient(result.gradient)] + [P.random_order(n, s) for s in seeds]
    masks = np.concatenate([P.pruning_masks(o, shape, fractions) for o in orders])
    job = AblationJob(loaded.spec, masks, method, False, max_tokens)
    logits = (run or run_local)(job, loaded, dataset, progress).logits
    values = _values(ev, logits, m).reshape(len(orders), len(fractions))
    rand = values[2:]
    higher = higher_is_better(m)
    tol = 1.0 if higher else 0.05
    return {"fractions": list(fractions), "by_importance": values[0], "by_gradient": values[1],
            "random": rand, "random_mean": rand.mean(0), "random_low": rand.min(0),
            "random_high": rand.max(0), "orders": {"by_importance": orders[0],
                                                   "by_gradient": orders[1]},
            "tolerance": tol,
            "prunable": {k: P.prunable_fraction(fractions, v, result.intact[m], tol, higher)
                         for k, v in (("by_importance", values[0]), ("by_gradient", values[1]),
                                      ("random_mean", rand.mean(0)))}}


__all__ = ["DEFAULT_METHOD", "ImportanceResult", "importance_study", "pruning_curves"]
