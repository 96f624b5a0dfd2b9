"""What a study hands the job queue: ONE description of its work, which every placement
(:mod:`analysis.core.execution.placements`) knows how to run.

- a plain callable ``fn(progress)``: light work on one input (one text's attributions, an
  uploaded checkpoint's loading); it runs in the queue's worker thread wherever the server's
  heavy work goes;
- :class:`Corpus`: a map/merge job (:class:`analysis.core.execution.corpus.CorpusJob`) over a
  ``datasets.Dataset``; in this process it is mapped over the whole corpus as one shard with
  the page's already loaded ``models``, on a Ray cluster over shards, one model per worker;
  the partials are merged by the job's own ``merge`` either way, so the numbers are the same;
- :class:`Study`: arithmetic between several corpus jobs (Head importance: the ablations, then
  the pruning masks chosen from their result), run in the worker thread; each of its corpus
  jobs goes through ``run(job, models, dataset, progress)``, which the placement supplies;
- :class:`Apart`: one training process (a fine-tune) that runs away from the server in any
  case: ``fn(progress, away)``, where ``away`` (:class:`analysis.core.execution.placements.Away`,
  chosen by the placement) runs its module-level function in a child process of its own
  (:mod:`analysis.core.execution.child`) or as one Ray task; the work never asks which.

The token cap is applied in ONE place, :func:`capped`: the first model of a job reads at most
``max_length`` tokens, in this process and on every Ray worker alike (a job whose models are
more than one LoadedModel says how through its own ``capped(models, max_length)``: drift).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Callable

from analysis.core.execution.corpus import run_local
from analysis.core.execution.progress import rate_step

Progress = Callable[[float, str], None]


def capped(job, models, max_length: int | None):
    """``models`` (what ``job.load()`` returns) with the first model's token cap set to
    ``max_length`` (None: as they are). The one place the page's token cap is applied."""
    if not max_length:
        return models
    own = getattr(job, "capped", None)
    if own is not None:
        return own(models, max_length)
    return replace(models, max_length=max_length)


@dataclass
class Capped:
    """``job`` whose models are :func:`capped` once loaded (what a Ray worker loads)."""

    job: Any
    max_length: int

    def load(self):
        return capped(self.job, self.job.load(), self.max_length)

    def map(self, models, shard, rows, progress=None):
        return self.job.map(models, shard, rows, progress)

    def merge(self, partials):
        return self.job.merge(partials)


@dataclass(frozen=True)
class Corpus:
    """A corpus job over ``dataset`` (see the module docstring).

    ``unit`` names its rows in the progress text; ``max_length`` is the token cap (None: the
    model's own); ``here_if_unloadable``: when a cluster's workers cannot load the model, run
    in this process instead. In-process only: ``models`` are the page's loaded models (None:
    ``job.load()``); ``start`` the bar's first text; ``step(progress)`` the ``(done, total)``
    callback that words the bar (default: "done / total UNIT, RATE UNIT/s"); ``done(result)``
    the bar's last text. ``here``: an in-process function ``here(progress)`` standing for the
    whole local run (the form a test or an older caller hands over)."""

    job: Any
    dataset: Any
    unit: str = "examples"
    max_length: int | None = None
    here_if_unloadable: bool = False
    models: Any = None
    start: str = ""
    step: Callable[[Progress], Callable[[int, int], None]] | None = None
    done: Callable[[Any], str] | None = None
    here: Callable[[Progress], Any] | None = None

    @property
    def spec(self) -> str | None:
        return getattr(self.job, "spec", None)

    @property
    def size(self) -> int:
        return len(self.dataset) if self.dataset is not None else 0

    def run_here(self, progress: Progress):
        """The whole corpus as one shard in this process, the bar worded as the study asks;
        the result's ``seconds`` (when it has them) are the time of the run."""
        if self.here is not None:
            return self.here(progress)
        if self.start:
            progress(0.0, self.start)
        step = (self.step or (lambda p: rate_step(p, self.unit)))(progress)
        t0 = time.perf_counter()
        models = self.models if self.models is not None else self.job.load()
        result = run_local(self.job, capped(self.job, models, self.max_length), self.dataset,
                           step)
        if hasattr(result, "seconds"):
            result.seconds = time.perf_counter() - t0
        if self.done is not None:
            progress(1.0, self.done(result))
        return result

    __call__ = run_here  # called with a progress, a description runs in this process


@dataclass(frozen=True)
class Study:
    """``study(progress, run)``: a study computed in the worker thread whose corpus jobs go
    through ``run(job, models, dataset, progress)`` (:func:`run_local` in this process; on the
    cluster ``models`` is not used). ``spec``: the model its jobs load; ``size``: its rows."""

    study: Callable
    spec: str
    size: int = 0
    unit: str = "examples"
    here_if_unloadable: bool = False

    def run_here(self, progress: Progress):
        return self.study(progress, run_local)

    __call__ = run_here


@dataclass(frozen=True)
class Apart:
    """``fn(progress, away)``: one training process away from the server (module docstring);
    its placement hands ``away`` (:class:`analysis.core.execution.placements.Away`)."""

    fn: Callable[[Progress, Any], Any]


def describe(work, dataset=None, **corpus):
    """One description from what a caller hands over: a description as it is; a bare
    CorpusJob (``load``/``map``/``merge``) with its ``dataset`` (and :class:`Corpus`'s options
    ``corpus``); or a plain callable (light work, run in the worker thread)."""
    if isinstance(work, (Corpus, Study, Apart)):
        return work
    if hasattr(work, "map") and hasattr(work, "merge"):
        return Corpus(work, dataset, **corpus)
    return work


def heavy(work) -> bool:
    """Whether ``work`` is one the Ray cluster may take (anything but a plain callable)."""
    return isinstance(work, (Corpus, Study, Apart))
