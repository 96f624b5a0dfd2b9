"""The No-op statistics study's one interface (:mod:`analysis.core.study`): :data:`STUDY`, the
statistics of a corpus (and, with ``gradients``, the gradient importance over it: the
command's ``--gradients``), and :data:`GRADIENTS`, the gradient importance of the page's tab
over the corpus's first examples. The page, ``python -m analysis noop`` and the report make
these calls; where they run is the placement's choice."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from analysis.core.corpus import sample_corpus
from analysis.core.encoding import encode_dataset
from analysis.core.execution.progress import rate_step
from analysis.core.execution.work import Capped, Corpus, Study, capped
from analysis.core.models import DEFAULT_SPEC, load_model
from analysis.core.study import StudyDef
from analysis.noop.corpus import CorpusStats, NoopJob
from analysis.noop.gradients import (GradientImportance, GradientsJob, gradient_importance,
                                     loss_head)

UNIT = "examples"


@dataclass(frozen=True)
class Inputs:
    """The statistics' inputs: the model's spec, the corpus (a Dataset with ``text`` /
    ``text_pair``), at most ``batch_size`` examples a forward, the attention norms
    (Kobayashi et al.) or not, the token cap (None: the model's own) and, with ``gradients``,
    the gradient importance over the whole corpus too (its models: ``(loaded, loss head)``)."""

    spec: str
    dataset: Any
    batch_size: int = 64
    norms: bool = True
    max_length: int | None = None
    gradients: bool = False


def plan(inputs: Inputs, models=None) -> Corpus | Study:
    """The statistics as one corpus job (``models``: the loaded model, or None: loaded by its
    spec where the job runs); with ``inputs.gradients`` a study of two corpus jobs, the
    statistics then the gradients (``models``: ``(loaded, loss head)``, or None: loaded by
    the spec)."""
    job = NoopJob(inputs.spec, inputs.batch_size, norms=inputs.norms)
    n = len(inputs.dataset)
    if not inputs.gradients:
        return Corpus(job, inputs.dataset, unit=UNIT, max_length=inputs.max_length,
                      models=models, start=f"Running {n} examples through the model...",
                      done=lambda stats: f"{stats.n_examples} examples in {stats.seconds:.1f} "
                                         f"s ({stats.examples_per_second:.1f} examples/s)")
    loaded, head = models if models is not None else (load_model(inputs.spec),
                                                      loss_head(inputs.spec))

    def both(progress, run) -> CorpusStats:
        t0 = time.perf_counter()  # in this process or on a Ray cluster
        stats_job = Capped(job, inputs.max_length) if inputs.max_length else job
        stats = run(stats_job, capped(job, loaded, inputs.max_length), inputs.dataset,
                    rate_step(progress, UNIT))
        stats.seconds = time.perf_counter() - t0
        grads = GradientsJob(inputs.spec, max_length=inputs.max_length or loaded.max_length)
        stats.gradients = run(grads, head, inputs.dataset,
                              rate_step(progress, f"{UNIT} (gradients)"))
        return stats

    return Study(both, inputs.spec, size=n, unit=UNIT)


def example() -> Inputs:
    """The page's first view: the default model over the bundled sample corpus's first 200
    examples (the page's default cap), 64 a batch, with the attention norms."""
    return Inputs(DEFAULT_SPEC, sample_corpus(200))


STUDY = StudyDef(name="noop", title="No-op statistics", inputs=Inputs, result=CorpusStats,
                 plan=plan, example=example)


@dataclass(frozen=True)
class GradientInputs:
    """The page's gradient importance: over the corpus's first ``n_examples`` readable
    examples at most ``max_length`` tokens each, with the model's own loss."""

    spec: str
    dataset: Any
    n_examples: int
    max_length: int


def gradients_plan(inputs: GradientInputs, models=None):
    """Light work in the worker thread (``models``: ``(loaded, loss head)``, or None: loaded
    by the spec; the examples are encoded by the loaded model's tokenizer), 8 examples a
    backward pass."""
    loaded, head = models if models is not None else (load_model(inputs.spec),
                                                      loss_head(inputs.spec))

    def work(progress) -> GradientImportance:
        progress(0.0, "Back-propagating the loss to every attention weight...")
        encs = encode_dataset(loaded.tokenizer, inputs.dataset, inputs.max_length,
                              inputs.n_examples).encodings
        grads = gradient_importance(head, encs, batch_size=8, progress=lambda d, t: progress(
            d / t, f"Gradients: {d} / {t} examples"))
        progress(1.0, f"Gradients: {grads.n_examples} examples")
        return grads

    return work


GRADIENTS = StudyDef(name="noop-gradients", title="No-op statistics: gradient importance",
                     inputs=GradientInputs, result=GradientImportance, plan=gradients_plan)
