"""The predictions study, one call for the page, the CLI and the report (docs/METHODS.md,
"Predictions"): a classifier's answer to every row of a labelled data set, its metrics over the
whole set and every slice with bootstrap 95% intervals, optionally a second classifier's
answers with the change of every metric (paired intervals) and the rows where the two
disagree, and the flip rates of generated counterfactuals.

:class:`Inputs` holds everything but the loaded models (the rows, read once, and the
settings); :func:`plan` returns the work as one plain ``fn(progress)`` (forwards over the set:
light work, bounded by the data's caps); :func:`predictions_study` runs it here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from analysis.core.intervals import N_BOOT
from analysis.core.study import StudyDef
from analysis.importance.evalset import load_classifier
from analysis.predictions.data import Labelled, heldout
from analysis.predictions.metrics import (Resamples, confusion, row_counts, slice_changes,
                                          slice_metrics)
from analysis.predictions.predict import BATCH_SIZE, Answers, predict, predict_second
from analysis.predictions.result import Result
from analysis.predictions.robustness import robustness
from analysis.predictions.slices import slices


@dataclass(frozen=True)
class Inputs:
    """What the study needs besides the loaded classifiers: the rows (read and encoded once:
    :func:`analysis.predictions.data.load_labelled`) and the settings."""

    data: Labelled
    robustness: bool = True
    n_boot: int = N_BOOT
    seed: int = 0
    batch_size: int = BATCH_SIZE


@dataclass(frozen=True)
class Models:
    """The classifier (LoadedModel), its ABSA card or None, and optionally a second one to
    compare with."""

    loaded: object
    card: dict | None = None
    compare: object = None
    compare_card: dict | None = None


def flips_of(data: Labelled, a: Answers, b: Answers) -> list[dict]:
    """The rows where the two classifiers answer differently: the row, the gold label, both
    answers and whether the second fixed or broke it (neither: both wrong)."""
    pa, pb = a.predictions, b.predictions
    out = []
    for k in np.flatnonzero(pa != pb):
        g = int(data.gold[k])
        out.append({"row": int(k), "label": data.classes[g],
                    "prediction": data.classes[int(pa[k])],
                    "prediction_b": data.classes[int(pb[k])],
                    "change": "fixed" if pb[k] == g else "broken" if pa[k] == g else
                    "both wrong"})
    return out


def _metrics(data, counts, cuts, boot) -> dict:
    got = slice_metrics(counts, boot, {k: m for k, (_, m) in cuts.items()}, len(data.classes),
                        data.absa)
    return {key: {"name": name, **got[key]} for key, (name, _) in cuts.items()}


def predictions_study(models: Models, inputs: Inputs,
                      progress: Callable[[float, str], None] | None = None) -> Result:
    """The study (see the module docstring); ``progress(fraction, text)`` is told each stage."""
    say = progress or (lambda f, t: None)
    t0 = time.perf_counter()
    data = inputs.data
    two = models.compare is not None
    share = 0.45 if two else 0.8 if inputs.robustness else 0.9
    say(0.0, f"answering {data.n} examples")
    a = predict(models.loaded, data, inputs.batch_size,
                lambda d, t: say(share * d / t, f"answering the examples ({d}/{t})"))
    b = None
    if two:
        b = predict_second(models.compare, models.compare_card, data, inputs.batch_size,
                           lambda d, t: say(share + share * d / t,
                                            f"the second model ({d}/{t})"))
    say(0.9 if not inputs.robustness else 2 * share if two else share, "metrics by slice")
    cuts = slices(data.gold, data.classes, data.tokens, data.categories)
    boot = Resamples(data.units, inputs.n_boot, inputs.seed)  # one set for every interval
    counts_a = row_counts(data.gold, a.scores, a.losses, data.absa)
    metrics = _metrics(data, counts_a, cuts, boot)
    metrics_b = changes = None
    if b is not None:
        counts_b = row_counts(data.gold, b.scores, b.losses, data.absa)
        metrics_b = _metrics(data, counts_b, cuts, boot)
        changes = slice_changes(counts_a, counts_b, boot, {k: m for k, (_, m) in cuts.items()},
                                len(data.classes), data.absa)
    robust = None
    if inputs.robustness:
        start = 0.92 if two else share + 0.05
        robust = robustness(models.loaded, data, a.predictions, cuts, boot,
                            batch_size=inputs.batch_size,
                            progress=lambda f, t: say(start + (0.99 - start) * f, t))
    result = Result.of(data, models, a, b, metrics, metrics_b, changes,
                       flips_of(data, a, b) if b is not None else None, robust,
                       confusion(data.gold, a.predictions, len(data.classes)),
                       time.perf_counter() - t0)
    if two and data.absa and set((models.compare_card or {}).get("heldout_ids") or []) != \
            set((models.card or {}).get("heldout_ids") or []):
        result.notes.append(f"{models.compare.name} answers the sentences held out for "
                            f"{models.loaded.name}: some may be in its own training data.")
    say(1.0, "done")
    return result


def plan(inputs: Inputs, models: Models):
    """The study as one description of its work for the job queue: a plain ``fn(progress)``
    (its forwards are bounded by the data's caps)."""
    def work(progress):
        return predictions_study(models, inputs, progress)

    return work


def example_inputs() -> Inputs:
    """The inputs the page opens on: the example checkpoint's held-out sentences (the models:
    :func:`example_models`)."""
    loaded, card = load_classifier("example")
    return Inputs(heldout(loaded, card))


def example_models() -> Models:
    return Models(*load_classifier("example"))


STUDY = StudyDef(name="predictions", title="Predictions", inputs=Inputs, result=Result,
                 plan=plan, example=example_inputs)
EXAMPLE_COMMAND = ("python -m analysis predictions --model example --data sample "
                   "--out data/precomputed/predictions.json --precomputed")


def run(inputs: Inputs, models: Models, progress=None) -> Result:
    """The study run in this process (:meth:`StudyDef.run`: the CLI, tests)."""
    return STUDY.run(inputs, models, progress=progress)
