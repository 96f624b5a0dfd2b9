"""Head importance as one study (:mod:`analysis.core.study`): its inputs, its plan for the job
queue and ``STUDY``, which the CLI (``python -m analysis importance``) and the precomputed
example (``python -m analysis precompute importance``) run; the result is
:class:`analysis.importance.run.ImportanceResult`."""

from __future__ import annotations

from dataclasses import dataclass

from analysis.core.errors import InputError
from analysis.core.execution.work import Study
from analysis.core.models import EXAMPLE_SPEC
from analysis.core.study import StudyDef
from analysis.importance.evalset import load_classifier, load_eval_set
from analysis.importance.one import OneResult, encode_one, one_example_study
from analysis.importance.run import DEFAULT_METHOD, ImportanceResult, importance_study
from analysis.importance.scoring import LOSS


@dataclass(frozen=True)
class Inputs:
    """The classifier (a spec: ``example``, a checkpoint folder, a hub id), its labelled data
    (ABSA data or ``sample``: the checkpoint's held-out sentences; else a labelled
    .csv/.jsonl with its columns) and how heads are disabled and scored."""

    model: str = EXAMPLE_SPEC
    data: str = "sample"
    task: str | None = None
    method: str = DEFAULT_METHOD
    metric: str | None = None  # None: the task's first (aspect F1, accuracy)
    max_examples: int | None = None
    prune: bool = False
    text_column: str = "text"
    pair_column: str | None = None
    label_column: str = "label"


def prepare(inputs: Inputs, models=None):
    """(classifier, card, its labelled examples) for ``inputs``; ``models``: the classifier
    and its card already loaded (a page's), else loaded by the spec. A metric the data does
    not have is refused here, before any work."""
    loaded, card = models if models is not None else load_classifier(inputs.model)
    ev = load_eval_set(loaded, card, inputs.data, task=inputs.task,
                       max_examples=inputs.max_examples, text_column=inputs.text_column,
                       pair_column=inputs.pair_column, label_column=inputs.label_column)
    names = tuple(ev.scorer.metrics) + (LOSS,)
    if inputs.metric is not None and inputs.metric not in names:
        raise InputError(f"The metric {inputs.metric} does not fit this data; use one of "
                         f"{', '.join(names)}.")
    return loaded, card, ev


def plan(inputs: Inputs, models=None) -> Study:
    """Every head and layer disabled, the intervals, gradients and (``prune``) the pruning
    curves: one :class:`~analysis.core.execution.work.Study` whose ablations are corpus jobs
    (in this process, or on the Ray cluster of the placement)."""
    loaded, _card, ev = prepare(inputs, models)

    def study(progress, run):
        return importance_study(loaded, ev, method=inputs.method, metric=inputs.metric,
                                prune=inputs.prune, progress=progress, run=run)

    return Study(study, loaded.spec, ev.n_examples, here_if_unloadable=True)


def example() -> Inputs:
    """The page's first view: the example checkpoint on its held-out sentences, heads
    disabled by spreading their attention evenly, aspect F1, with the pruning curves."""
    return Inputs(prune=True)


STUDY = StudyDef(name="importance", title="Head importance", inputs=Inputs,
                 result=ImportanceResult, plan=plan, example=example)


@dataclass(frozen=True)
class OneInputs:
    """One example (:mod:`analysis.importance.one`): the classifier, a text (for an aspect: the
    review), an optional pair, the gold label, the aspect category asked (ABSA checkpoints of
    the M tasks; with a review, no pair) and how heads are disabled."""

    model: str = EXAMPLE_SPEC
    text: str = ""
    pair: str | None = None
    label: str = ""
    aspect: str | None = None
    method: str = DEFAULT_METHOD


def plan_one(inputs: OneInputs, models=None) -> Study:
    """Every head and layer disabled on the one example, its gate gradients: one
    :class:`~analysis.core.execution.work.Study` whose one corpus job is the whole-set
    study's (a data set of one row). ``models``: the classifier and its card already loaded.
    Bad input is refused here, before any work."""
    loaded, card = models if models is not None else load_classifier(inputs.model)
    one = encode_one(loaded, card, inputs.text, inputs.pair, inputs.label, inputs.aspect)

    def study(progress, run):
        return one_example_study(loaded, one, method=inputs.method, progress=progress, run=run)

    return Study(study, loaded.spec, 1, here_if_unloadable=True)


# the second computation: one example (python -m analysis importance --text ... --label ...)
ONE = StudyDef(name="importance-one", title="Head importance", inputs=OneInputs,
               result=OneResult, plan=plan_one)
