"""The Representations study's one interface (:mod:`analysis.core.study`): :data:`STUDY`, one
input's token vectors layer by layer in 2-D (``python -m analysis representations --text``, the
page's input part), and :data:`CORPUS`, the probes and geometry of a corpus's words (``--data``,
the page's corpus part); one model or two of the same shape. Where they run is the placement's
choice."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analysis.core.execution.work import Corpus
from analysis.core.models import load_model
from analysis.core.study import StudyDef
from analysis.representations.corpus import MAX_POINTS, CorpusResult
from analysis.representations.probes import FOLDS
from analysis.representations.run import corpus_job, corpus_representations
from analysis.representations.single import InputResult, input_representations


@dataclass(frozen=True)
class Inputs:
    """One input: the model's spec, the text and its optional pair (or ``labelled``, an input
    from labelled data: :class:`analysis.representations.inputs.LabelledInput`), the second
    model's spec (None: one model), the projection and its seed."""

    spec: str
    text: str
    pair: str | None = None
    compare: str | None = None
    method: str = "pca"
    seed: int = 0
    labelled: Any = None


def _models(inputs, models):
    """``(loaded, compare or None)``: ``models``, or loaded by the inputs' specs."""
    if models is not None:
        return models
    return load_model(inputs.spec), load_model(inputs.compare) if inputs.compare else None


def plan(inputs: Inputs, models=None):
    """Light work on one input (``models``: ``(loaded, compare or None)``, or None: loaded by
    the specs)."""
    loaded, compare = _models(inputs, models)

    def work(progress) -> InputResult:
        progress(0.1, "Forward passes and projections")
        return input_representations(loaded, inputs.text, inputs.pair, compare,
                                     method=inputs.method, seed=inputs.seed,
                                     labelled=inputs.labelled)

    return work


STUDY = StudyDef(name="representations", title="Representations", inputs=Inputs,
                 result=InputResult, plan=plan)


@dataclass(frozen=True)
class CorpusInputs:
    """A corpus (a treebank, ABSA data or a labelled corpus as a Dataset) for the model
    ``spec`` and the second model ``compare`` (None: one model): the probes (None: the data's
    own), at most ``max_sentences``, the scatter's projection and points (``scatter`` False:
    none), the probes' folds, the seed and the sentences per forward."""

    spec: str
    dataset: Any
    compare: str | None = None
    probes: tuple[str, ...] | None = None
    max_sentences: int | None = None
    method: str = "pca"
    max_points: int = MAX_POINTS
    folds: int = FOLDS
    seed: int = 0
    batch_size: int = 32
    scatter: bool = True


def corpus_plan(inputs: CorpusInputs, models=None) -> Corpus:
    """One corpus job, checked first (one-line refusals; ``models``: ``(loaded, compare or
    None)``, or None: loaded by the specs): in this process the staged run (word vectors, then
    probes and geometry, the bar in percent), on a Ray cluster the word rows over shards; where
    the cluster's workers cannot load a model, it runs here."""
    loaded, compare = _models(inputs, models)
    settings = dict(probes=inputs.probes, max_sentences=inputs.max_sentences,
                    method=inputs.method, max_points=inputs.max_points, folds=inputs.folds,
                    seed=inputs.seed, batch_size=inputs.batch_size, scatter=inputs.scatter)
    job, cut = corpus_job(loaded, inputs.dataset, compare, **settings)

    def here(progress) -> CorpusResult:
        return corpus_representations(loaded, inputs.dataset, compare, **settings,
                                      progress=lambda d, t: progress(d / max(t, 1),
                                                                     f"{d}% done"))

    return Corpus(job, cut, unit="sentences", here_if_unloadable=True,
                  models=(loaded, compare), here=here)


CORPUS = StudyDef(name="representations-corpus", title="Representations: a corpus",
                  inputs=CorpusInputs, result=CorpusResult, plan=corpus_plan)
